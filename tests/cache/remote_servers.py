#!/usr/bin/env python3
"""The compile cache's remote tier against servers that are hostile or locked, each started
on loopback by this test and stopped when it ends (also on failure):

  a server that trickles its reply one byte a second delays a job by about the 2 s a
  command may take, not by the length of the reply; a value of 300 MB planted in Redis is
  refused by its announced length (the job's memory does not grow by it); key names with
  escape codes are printed escaped by `kiln cache list --remote`; a redis-server with
  requirepass, and one with an ACL user, are used with the password from
  KILN_REMOTE_CACHE_PASSWORD_FILE / KILN_REMOTE_CACHE_PASSWORD (none, or a wrong one: one
  warning, the job trains); a TLS-only redis-server that asks for client certificates is
  used through rediss:// with the CA in SSL_CERT_FILE (a server kiln cannot verify: one
  warning, the job trains).

Usage: remote_servers.py KILN WORKDIR. Exit 77 (skipped) without redis-server, openssl or
the data set.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

from redis_server import Failure, Redis, free_port, prepare

KILN, WORK = sys.argv[1], sys.argv[2]
TRAIN = ["train", "--backend", "cpu", "--steps", "2", "--train-limit", "1024", "--test-limit", "200",
         "--batch-size", "64", "--log-every", "1", "--seed", "1", "--quiet"]
WARNING = "going on without the remote cache"


def private_file(name, data):
    path = os.path.join(WORK, name)
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
        f.write(data)
    return path


def job(name, url, key, env=None, expect=0):
    """A training run with a fresh local cache: (final record or None, process, seconds)."""
    local = os.path.join(WORK, "local-" + name)
    shutil.rmtree(local, ignore_errors=True)
    out = os.path.join(WORK, name + ".jsonl")
    if os.path.exists(out):
        os.remove(out)
    args = [KILN] + TRAIN + ["--graph-compiler-cache-dir", local, "--remote-cache", url, "--remote-cache-key-file",
                             key, "--metrics-out", out]
    t0 = time.time()
    p = subprocess.run(args, capture_output=True, text=True, timeout=600, env=dict(os.environ, **(env or {})))
    seconds = time.time() - t0
    stdout, stderr = p.stdout, p.stderr
    if expect is not None and p.returncode != expect:
        raise Failure("%s: kiln exited %d, expected %d\n%s" % (name, p.returncode, expect, (stdout + stderr)[-3000:]))
    fin = None
    if p.returncode == 0:
        fin = [json.loads(line) for line in open(out) if '"final"' in line][0]
    return fin, p, seconds


def max_rss_mib(args, env=None):
    """Runs `args` and returns (process, its peak resident memory in MiB)."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    stdout, stderr = proc.stdout.read().decode(), proc.stderr.read().decode()
    return subprocess.CompletedProcess(args, os.waitstatus_to_exitcode(status), stdout, stderr), usage.ru_maxrss / 1024


class Trickler:
    """A loopback server speaking RESP that answers GET with a 200-byte value, one byte a
    second, and everything else with +OK."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.stop = False
        threading.Thread(target=self.serve, daemon=True).start()

    def url(self):
        return "redis://127.0.0.1:%d" % self.sock.getsockname()[1]

    def serve(self):
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.client, args=(c,), daemon=True).start()

    def client(self, c):
        try:
            while not self.stop:
                got = c.recv(1 << 16)
                if not got:
                    return
                if b"GET" not in got:
                    c.sendall(b"+OK\r\n")
                    continue
                c.sendall(b"$200\r\n")
                for _ in range(202):
                    time.sleep(1)
                    c.sendall(b"x")
        except OSError:
            pass
        finally:
            c.close()

    def close(self):
        self.stop = True
        self.sock.close()


def slow_and_huge(key):
    # The delay a trickling server causes, against a remote that is down (no wait at all).
    _, p, down = job("down", "redis://127.0.0.1:%d" % free_port(), key)
    trickler = Trickler()
    try:
        fin, p, slow = job("trickle", trickler.url(), key)
    finally:
        trickler.close()
    if p.stderr.count(WARNING) != 1 or "no answer within the time allowed" not in p.stderr:
        raise Failure("a trickling server: expected one warning that it did not answer in time:\n" + p.stderr[-2000:])
    if slow - down > 8:
        raise Failure("a server trickling a 200-byte reply held the job %.1f s longer than a remote that is down "
                      "(bound: the 2 s a command may take)" % (slow - down))
    print("a trickling server: the job took %.1f s, %.1f s with no remote; one warning" % (slow, down))

    # A 300 MB value under a key a job looks up: refused by its length, never read.
    redis = Redis(WORK)
    try:
        url = redis.url()
        job("fill", url, key)
        names = redis.keys()
        env = dict(os.environ)
        args = [KILN] + TRAIN + ["--remote-cache", url, "--remote-cache-key-file", key]
        shutil.rmtree(os.path.join(WORK, "local-rss"), ignore_errors=True)
        p, normal = max_rss_mib(args + ["--graph-compiler-cache-dir", os.path.join(WORK, "local-rss")], env)
        if p.returncode != 0:
            raise Failure("a job with a good remote failed:\n" + p.stderr[-2000:])
        redis.set_zeros(names[0], 300 << 20)
        shutil.rmtree(os.path.join(WORK, "local-huge"), ignore_errors=True)
        p, huge = max_rss_mib(args + ["--graph-compiler-cache-dir", os.path.join(WORK, "local-huge")], env)
        if p.returncode != 0 or "announced a value of %d bytes" % (300 << 20) not in p.stderr:
            raise Failure("a 300 MB value: expected the job to train and to warn that it was not read (exit %d)\n%s"
                          % (p.returncode, p.stderr[-2000:]))
        if int(redis.command("STRLEN", names[0])) >= 300 << 20:
            raise Failure("a 300 MB value refused: the job should have replaced it with the entry it compiled")
        if huge > normal + 100:
            raise Failure("a 300 MB value refused unread still grew the job to %.0f MiB (%.0f MiB without it)"
                          % (huge, normal))
        print("a 300 MB value: refused unread and replaced; peak memory %.0f MiB (%.0f MiB with good values)"
              % (huge, normal))

        # Key names from Redis are printed escaped: no escape codes, no forged lines.
        planted = b"kiln:entry:\x1b[2K\r" + names[1][len("kiln:entry:"):].encode() + b"  1 KiB\nall good\x1b]0;x\x07"
        redis.command("SET", planted, b"not kiln's")
        p = subprocess.run([KILN, "cache", "list", "--remote", "--remote-cache", url, "--remote-cache-key-file", key],
                           capture_output=True, timeout=120)
        out = p.stdout.decode("utf-8", "replace")
        if p.returncode != 0 or b"\x1b" in p.stdout or b"\r" in p.stdout or b"\x07" in p.stdout:
            raise Failure("cache list --remote printed a planted key raw (exit %d):\n%r" % (p.returncode, p.stdout))
        if "\\x1b[2K\\x0d" not in out or len(out.splitlines()) != len(names) + 1:
            raise Failure("cache list --remote: expected the planted key escaped on one line:\n" + out)
        print("a key with escape codes: printed escaped, on its own line")
    finally:
        redis.stop()


def with_password(key):
    password = "pw-" + os.urandom(8).hex()
    pw_file = private_file("password", password.encode() + b"\n")
    for user in (None, "kiln-ci"):
        redis = Redis(WORK, password=password, user=user)
        try:
            url = redis.url(user)
            first, p, _ = job("auth-first", url, key, {"KILN_REMOTE_CACHE_PASSWORD_FILE": pw_file})
            graphs = first["compile"]["graphs"]
            if WARNING in p.stderr or len(redis.keys()) != graphs:
                raise Failure("AUTH%s: the first job should publish %d graphs: %s\n%s"
                              % (" as " + user if user else "", graphs, redis.keys(), p.stderr[-2000:]))
            second, p, _ = job("auth-second", url, key, {"KILN_REMOTE_CACHE_PASSWORD": password})
            if second["compile"]["remote_hits"] != graphs:
                raise Failure("AUTH from KILN_REMOTE_CACHE_PASSWORD: expected %d remote hits: %s"
                              % (graphs, second["compile"]))
            _, p, _ = job("auth-none", redis.url(), key)
            if p.stderr.count(WARNING) != 1 or "NOAUTH" not in p.stderr:
                raise Failure("no password: expected one warning with the server's NOAUTH:\n" + p.stderr[-2000:])
            _, p, _ = job("auth-wrong", url, key, {"KILN_REMOTE_CACHE_PASSWORD": "wrong"})
            if p.stderr.count(WARNING) != 1 or "refused the password" not in p.stderr:
                raise Failure("a wrong password: expected one warning:\n" + p.stderr[-2000:])
            print("AUTH%s: a password file and a variable work; none or a wrong one: one warning, trained"
                  % (" as ACL user " + user if user else " (requirepass)"))
        finally:
            redis.stop()
    # Configuration errors, before any work (exit 2).
    readable = os.path.join(WORK, "readable-password")
    with open(readable, "w") as f:
        f.write("pw")
    os.chmod(readable, 0o644)
    for url, env, said in [("redis://kiln:%s@127.0.0.1:6379" % password, {}, "has a password in it"),
                           ("redis://127.0.0.1:6379", {"KILN_REMOTE_CACHE_PASSWORD_FILE": readable}, "chmod 600"),
                           ("redis://127.0.0.1:6379", {"KILN_REMOTE_CACHE_PASSWORD_FILE": pw_file,
                                                       "KILN_REMOTE_CACHE_PASSWORD": "x"}, "give one")]:
        _, p, _ = job("auth-config", url, key, env, expect=2)
        if said not in p.stderr or password in p.stderr:
            raise Failure("expected %r (and no password) in:\n%s" % (said, p.stderr[-1500:]))
    print("a password in the URL, a password file others can read, two sources: refused (exit 2)")


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True, timeout=120)


def certificates():
    """A CA, a server certificate for 127.0.0.1 and a client certificate, signed by it."""
    d = os.path.join(WORK, "tls")
    os.makedirs(d, exist_ok=True)
    p = lambda name: os.path.join(d, name)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", p("ca.key"), "-out", p("ca.pem"), "-days", "2",
            "-subj", "/CN=kiln test CA")
    for who, ext in (("server", "subjectAltName=IP:127.0.0.1"), ("client", "extendedKeyUsage=clientAuth")):
        with open(p(who + ".ext"), "w") as f:
            f.write(ext + "\n")
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", p(who + ".key"), "-out", p(who + ".csr"), "-subj",
                "/CN=kiln test " + who)
        openssl("x509", "-req", "-in", p(who + ".csr"), "-CA", p("ca.pem"), "-CAkey", p("ca.key"), "-CAcreateserial",
                "-out", p(who + ".pem"), "-days", "2", "-extfile", p(who + ".ext"))
        os.chmod(p(who + ".key"), 0o600)
    return {"ca": p("ca.pem"), "cert": p("server.pem"), "key": p("server.key"), "client_cert": p("client.pem"),
            "client_key": p("client.key")}


def with_tls(key):
    tls = certificates()
    redis = Redis(WORK, tls=tls)
    try:
        url = redis.url()
        env = {"SSL_CERT_FILE": tls["ca"], "KILN_REMOTE_CACHE_TLS_CERT_FILE": tls["client_cert"],
               "KILN_REMOTE_CACHE_TLS_KEY_FILE": tls["client_key"]}
        first, p, _ = job("tls-first", url, key, env)
        graphs = first["compile"]["graphs"]
        if WARNING in p.stderr or len(redis.keys()) != graphs:
            raise Failure("TLS: the first job should publish %d graphs: %s\n%s" % (graphs, redis.keys(), p.stderr[-2000:]))
        second, p, _ = job("tls-second", url, key, env)
        if second["compile"]["remote_hits"] != graphs:
            raise Failure("TLS: expected %d remote hits: %s" % (graphs, second["compile"]))
        # A server kiln cannot verify (its CA unknown): one warning, no entry used.
        unverified = dict(env, SSL_CERT_FILE=os.path.join(WORK, "no-such-ca.pem"))
        fin, p, _ = job("tls-unknown-ca", url, key, unverified)
        if p.stderr.count(WARNING) != 1 or "certificate is refused" not in p.stderr or fin["compile"]["remote_hits"]:
            raise Failure("TLS with an unknown CA: expected one warning that the certificate is refused:\n"
                          + p.stderr[-2000:])
        # Plain text to a TLS port, and TLS without the client certificate the server asks for.
        _, p, _ = job("tls-plain", url.replace("rediss://", "redis://"), key)
        if p.stderr.count(WARNING) != 1:
            raise Failure("redis:// to a TLS port: expected one warning:\n" + p.stderr[-2000:])
        _, p, _ = job("tls-no-client-cert", url, key, {"SSL_CERT_FILE": tls["ca"]})
        if p.stderr.count(WARNING) != 1:
            raise Failure("TLS without the client certificate: expected one warning:\n" + p.stderr[-2000:])
        print("TLS: rediss:// with a client certificate publishes and hits; an unknown CA, plain text, no client "
              "certificate: one warning each, trained")
    finally:
        redis.stop()


def main():
    skip, key = prepare(WORK, ("redis-server", "openssl"))
    if skip:
        print("skipped: " + skip)
        return 77
    slow_and_huge(key)
    with_password(key)
    with_tls(key)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as e:
        print("FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
