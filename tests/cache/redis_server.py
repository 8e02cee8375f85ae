"""A real redis-server on loopback for the remote-tier tests (started by the test, stopped
when it ends, also on failure), optionally with a password (requirepass, an ACL user) or
TLS only, and a minimal RESP client that speaks to it the same way."""
import os
import socket
import ssl
import subprocess
import time


class Failure(Exception):
    pass


DATA = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"


def prepare(work, tools=("redis-server",)):
    """Why the test must be skipped (None: it can run), and a fresh `work` folder with the
    remote's key file (mode 600) when it can: (reason, key file)."""
    import shutil
    for tool in tools:
        if not shutil.which(tool):
            return "%s is not installed (scripts/install-deps installs it)" % tool, None
    if not os.path.exists(DATA):
        return "dataset-fashion-mnist is not installed", None
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    key = os.path.join(work, "remote.key")
    with open(os.open(key, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
        f.write(os.urandom(32))
    return None, key


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Redis:
    """redis-server on loopback, nothing saved to disk. `password`: requirepass (and, with
    `user`, an ACL user with every right); `tls`: a dict of cert, key, ca (and client_cert,
    client_key for this client) — the server then listens with TLS only and asks clients for
    certificates signed by `ca`."""

    def __init__(self, work, password=None, user=None, tls=None):
        self.port = free_port()
        self.password, self.user, self.tls = password, user, tls
        args = ["redis-server", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", work]
        if tls:
            args += ["--port", "0", "--tls-port", str(self.port), "--tls-cert-file", tls["cert"], "--tls-key-file",
                     tls["key"], "--tls-ca-cert-file", tls["ca"], "--tls-auth-clients", "yes"]
        else:
            args += ["--port", str(self.port)]
        if password:
            args += ["--requirepass", password]
        if user:
            args += ["--user", user, "on", ">" + password, "~*", "&*", "+@all"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                self.command("PING")
                return
            except (OSError, Failure):
                if self.proc.poll() is not None:
                    raise Failure("redis-server exited %d at start: %s" % (self.proc.returncode, " ".join(args)))
                time.sleep(0.05)
        raise Failure("redis-server did not start")

    def url(self, user=None):
        return "%s://%s127.0.0.1:%d/0" % ("rediss" if self.tls else "redis", user + "@" if user else "", self.port)

    def _connect(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        if self.tls:
            ctx = ssl.create_default_context(cafile=self.tls["ca"])
            ctx.load_cert_chain(self.tls["client_cert"], self.tls["client_key"])
            s = ctx.wrap_socket(s, server_hostname="127.0.0.1")
        return s

    def command(self, *args):
        def encode(args):
            return b"*%d\r\n" % len(args) + b"".join(
                b"$%d\r\n%s\r\n" % (len(a), a) for a in (x if isinstance(x, bytes) else str(x).encode() for x in args))
        payload = encode(args)
        if self.password:
            payload = encode(["AUTH"] + ([self.user] if self.user else []) + [self.password]) + payload
        with self._connect() as s:
            s.sendall(payload)
            f = s.makefile("rb")
            if self.password:
                self._reply(f)
            return self._reply(f)

    def set_zeros(self, name, size):
        """SET name to `size` zero bytes, streamed (this process never holds the value)."""
        head = b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n" % (len(name), name.encode(), size)
        if self.password:
            raise Failure("set_zeros: not with a password")
        with self._connect() as s:
            s.sendall(head)
            chunk = bytes(1 << 20)
            for i in range(0, size, len(chunk)):
                s.sendall(chunk[:min(len(chunk), size - i)])
            s.sendall(b"\r\n")
            return self._reply(s.makefile("rb"))

    def _reply(self, f):
        line = f.readline().rstrip(b"\r\n")
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b":"):
            return rest
        if kind == b"-":
            raise Failure("redis: " + rest.decode())
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else f.read(n + 2)[:-2]
        if kind == b"*":
            return [self._reply(f) for _ in range(int(rest))]
        raise Failure("redis: unexpected reply %r" % line)

    def keys(self):
        return sorted(k.decode(errors="replace") for k in self.command("KEYS", "kiln:entry:*"))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
