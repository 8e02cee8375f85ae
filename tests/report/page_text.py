"""The text a page shows in headless Chromium, shadow DOMs included (TensorBoard's Polymer
dashboards draw inside shadow roots, which --dump-dom leaves out). It drives Chromium over
its DevTools protocol: a WebSocket of the Python standard library's sockets (RFC 6455,
client side, text frames only), Page.navigate, then Runtime.evaluate of a walk over every
element and shadow root until the text holds what the caller waits for."""
import base64
import json
import os
import socket
import struct
import subprocess
import time
import urllib.request

# Every text node's text, one per line, through shadow roots, without style and script text.
_TEXT = """(() => { const out = [];
  const walk = (n) => {
    if (n.shadowRoot) walk(n.shadowRoot);
    for (const c of n.childNodes) {
      if (c.nodeType === 3) out.push(c.textContent.trim());
      else if (c.nodeType === 1 && c.tagName !== 'STYLE' && c.tagName !== 'SCRIPT') walk(c);
    }
  };
  walk(document.documentElement);
  return out.filter(t => t).join('\\n'); })()"""


class _WebSocket:
    def __init__(self, url):
        if not url.startswith("ws://"):
            raise ValueError("not a ws:// address: %s" % url)
        hostport, path = url[5:].split("/", 1)
        host, port = hostport.rsplit(":", 1)
        self._s = socket.create_connection((host, int(port)), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self._s.sendall(("GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, hostport, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self._s.recv(4096)
            if not chunk:
                raise ConnectionError("DevTools closed the connection during the handshake")
            head += chunk
        head, self._buf = head.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError("DevTools refused the WebSocket: %r" % head[:200])

    def send(self, text):
        data, mask = text.encode(), os.urandom(4)
        n = len(data)
        if n < 126:
            head = bytes([0x81, 0x80 | n])
        elif n < 65536:
            head = bytes([0x81, 0x80 | 126]) + struct.pack(">H", n)
        else:
            head = bytes([0x81, 0x80 | 127]) + struct.pack(">Q", n)
        self._s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, n):
        while len(self._buf) < n:
            chunk = self._s.recv(65536)
            if not chunk:
                raise ConnectionError("DevTools closed the connection")
            self._buf += chunk
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def receive(self):
        parts = []
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            parts.append(self._read(n))
            if b0 & 0x80:
                return b"".join(parts).decode()

    def close(self):
        self._s.close()


def page_text(chromium, url, profile, wait_for, timeout=60):
    """The page's text once every string of `wait_for` is in it, else after `timeout` s."""
    browser = subprocess.Popen([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                "--disable-extensions", "--user-data-dir=" + profile, "--remote-debugging-port=0",
                                "--window-size=1400,2000", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ws = None
    try:
        port_file, deadline = os.path.join(profile, "DevToolsActivePort"), time.time() + 30
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if time.time() > deadline or browser.poll() is not None:
                raise RuntimeError("Chromium opened no DevTools port")
            time.sleep(0.2)
        port = int(open(port_file).read().split()[0])
        pages = [t for t in json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port))
                 if t["type"] == "page"]
        ws = _WebSocket(pages[0]["webSocketDebuggerUrl"])
        ids = iter(range(1, 1 << 30))

        def call(method, **params):
            i = next(ids)
            ws.send(json.dumps({"id": i, "method": method, "params": params}))
            while True:
                m = json.loads(ws.receive())
                if m.get("id") == i:
                    return m

        call("Page.navigate", url=url)
        text, deadline = "", time.time() + timeout
        while time.time() < deadline:
            res = call("Runtime.evaluate", expression=_TEXT, returnByValue=True)
            text = res.get("result", {}).get("result", {}).get("value") or ""
            if all(w in text for w in wait_for):
                break
            time.sleep(1)
        return text
    finally:
        if ws:
            ws.close()
        browser.terminate()
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            browser.kill()
