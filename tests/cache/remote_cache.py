#!/usr/bin/env python3
"""The compile cache's remote tier against a real redis-server, started on loopback by this
test and stopped when it ends (also on failure):

  a job fills the remote; a second job with an empty local cache (another host's) loads
  every graph from it, with the same losses; a value changed in any byte, an entry stored
  under another key, and an unsigned value are refused, recompiled and replaced, training
  correct; a remote that is down, that never answers, or that stops in the middle of a job
  never fails the job; a missing or readable-by-others key file, a bad address and a remote
  without a local cache are configuration errors (exit 2).

Usage: remote_cache.py KILN WORKDIR. Exit 77 (skipped) without redis-server or the data set.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

from redis_server import Failure, Redis, free_port, prepare

KILN, WORK = sys.argv[1], sys.argv[2]
TRAIN = ["train", "--backend", "cpu", "--steps", "6", "--train-limit", "2048", "--test-limit", "500",
         "--batch-size", "64", "--log-every", "1", "--seed", "1", "--quiet"]


def kiln(args, expect=0):
    p = subprocess.run([KILN] + args, capture_output=True, text=True, timeout=600)
    if expect is not None and p.returncode != expect:
        raise Failure("kiln %s\nexited %d, expected %d\n%s" % (" ".join(args), p.returncode, expect,
                                                             (p.stdout + p.stderr)[-3000:]))
    return p


def job(name, remote, key, extra=(), expect=0):
    """A training run with a fresh local cache of its own: (final record, losses, process)."""
    local = os.path.join(WORK, "local-" + name)
    shutil.rmtree(local, ignore_errors=True)
    out = os.path.join(WORK, name + ".jsonl")
    if os.path.exists(out):
        os.remove(out)
    p = kiln(TRAIN + ["--graph-compiler-cache-dir", local, "--remote-cache", remote, "--remote-cache-key-file", key,
                      "--metrics-out", out] + list(extra), expect)
    recs = [json.loads(line) for line in open(out)] if expect == 0 else []
    fin = [r for r in recs if r["event"] == "final"]
    losses = {r["step"]: r["loss"] for r in recs if r["event"] == "progress"}
    return (fin[0] if fin else None), losses, p


def main():
    skip, key = prepare(WORK, ("redis-server",))
    if skip:
        print("skipped: " + skip)
        return 77
    redis = Redis(WORK)
    try:
        run_all(redis, key)
    finally:
        redis.stop()
    return 0


def run_all(redis, key):
    url = redis.url()
    # A job fills the remote; another host's job (an empty local cache) loads every graph.
    first, losses, _ = job("first", url, key)
    graphs = first["compile"]["graphs"]
    if first["compile"]["cache_misses"] != graphs or len(redis.keys()) != graphs:
        raise Failure("the first job should compile and publish its %d graphs: %s, remote %s"
                      % (graphs, first["compile"], redis.keys()))
    second, losses2, _ = job("second", url, key)
    if second["compile"]["remote_hits"] != graphs or second["compile"]["compiled"] != 0:
        raise Failure("an empty local cache should load every graph from the remote: %s" % second["compile"])
    if losses2 != losses:
        raise Failure("a remote hit trained differently: %s vs %s" % (losses2, losses))
    print("remote hit: %d graphs loaded by a job with an empty local cache, the same losses" % graphs)
    # The same from the environment: KILN_REMOTE_CACHE and KILN_REMOTE_CACHE_KEY_FILE.
    out = os.path.join(WORK, "env.jsonl")
    env = dict(os.environ, KILN_REMOTE_CACHE=url, KILN_REMOTE_CACHE_KEY_FILE=key)
    local = os.path.join(WORK, "local-env")
    p = subprocess.run([KILN] + TRAIN + ["--graph-compiler-cache-dir", local, "--metrics-out", out], env=env,
                       capture_output=True, text=True, timeout=600)
    fin = [json.loads(line) for line in open(out) if '"final"' in line] if p.returncode == 0 else []
    if not fin or fin[0]["compile"]["remote_hits"] != graphs:
        raise Failure("KILN_REMOTE_CACHE / KILN_REMOTE_CACHE_KEY_FILE: expected %d remote hits (exit %d)\n%s"
                      % (graphs, p.returncode, (fin[0]["compile"] if fin else p.stderr[-2000:])))
    print("the same through KILN_REMOTE_CACHE and KILN_REMOTE_CACHE_KEY_FILE")

    # Refused values: every one is recompiled (and replaced), training correct.
    names = redis.keys()
    good = {k: redis.command("GET", k) for k in names}  # as the first job signed them
    middle = bytearray(good[names[0]])
    middle[len(middle) // 2] ^= 0x01
    cases = {"a changed byte": (names[0], bytes(middle)),
             "another key's entry": (names[0], good[names[1]]),
             "an unsigned value": (names[0], good[names[0]][-4096:]),
             "a changed last byte": (names[0], good[names[0]][:-1] + bytes([good[names[0]][-1] ^ 0x80]))}
    for what, (name, value) in cases.items():
        redis.command("SET", name, value)
        fin, got, p = job("refused", url, key)
        if "remote entry %s" % name[len("kiln:entry:"):] not in p.stderr or "not loaded" not in p.stderr:
            raise Failure("%s: no warning naming the refused entry:\n%s" % (what, p.stderr[-2000:]))
        if fin["compile"]["remote_hits"] != graphs - 1 or fin["compile"]["compiled"] != 1:
            raise Failure("%s: expected 1 graph compiled, %d from the remote: %s" % (what, graphs - 1, fin["compile"]))
        if got != losses:
            raise Failure("%s: the job trained differently" % what)
        after, _, _ = job("after", url, key)
        if redis.command("GET", name) == value or after["compile"]["remote_hits"] != graphs:
            raise Failure("%s: the refused entry was not replaced by a good one: %s" % (what, after["compile"]))
        print("%s: refused, compiled, replaced; the same losses" % what)

    remote_cli(redis, key, names)

    # A remote that is down, or never answers: the job goes on, warning once.
    closed = "redis://127.0.0.1:%d" % free_port()
    fin, got, p = job("down", closed, key)
    if p.stderr.count("going on without the remote cache") != 1 or got != losses:
        raise Failure("a remote that is down: expected one warning and the same training:\n%s" % p.stderr[-2000:])
    mute = socket.socket()
    mute.bind(("127.0.0.1", 0))
    mute.listen(8)
    t0 = time.time()
    fin, got, p = job("mute", "redis://127.0.0.1:%d" % mute.getsockname()[1], key)
    waited = time.time() - t0
    mute.close()
    if p.stderr.count("going on without the remote cache") != 1 or got != losses:
        raise Failure("a remote that never answers: expected one warning and the same training:\n%s" % p.stderr[-2000:])
    print("remote down / never answering: one warning each, the job trained as before (%.1f s with the mute one)"
          % waited)

    # Redis stopped in the middle of a job: the evaluation graph is looked up at the end.
    redis.command("FLUSHALL")
    out = os.path.join(WORK, "stopped.jsonl")
    local = os.path.join(WORK, "local-stopped")
    shutil.rmtree(local, ignore_errors=True)
    proc = subprocess.Popen([KILN] + TRAIN[:4] + ["600"] + TRAIN[5:] + [
        "--graph-compiler-cache-dir", local, "--remote-cache", url, "--remote-cache-key-file", key, "--metrics-out", out],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(600):
        if os.path.exists(out) and any('"progress"' in line for line in open(out)):
            break
        time.sleep(0.1)
    redis.stop()
    stdout, stderr = proc.communicate(timeout=600)
    if proc.returncode != 0 or "done: 600 steps" not in stdout or "going on without the remote cache" not in stderr:
        raise Failure("a job whose remote stopped: exit %d, expected 0 and one warning when it next needed the "
                      "remote (the evaluation graph)\n%s" % (proc.returncode, (stdout + stderr)[-2000:]))
    print("redis stopped mid-job: the job finished")


def remote_cli(redis, key, names):
    """kiln cache stats|list|verify|prune|clear --remote: the same checks as a compile; prune
    removes what a compile would refuse, clear every entry of kiln's and no other key."""
    base = ["--remote", "--remote-cache", redis.url(), "--remote-cache-key-file", key, "--json"]
    stats = json.loads(kiln(["cache", "stats"] + base).stdout)
    if stats["entries"] != len(names) or stats["bad"] != 0:
        raise Failure("cache stats --remote: %s" % stats)
    p = subprocess.run([KILN, "cache", "stats", "--remote", "--json"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, KILN_REMOTE_CACHE=redis.url(), KILN_REMOTE_CACHE_KEY_FILE=key))
    if p.returncode != 0 or json.loads(p.stdout)["entries"] != len(names):
        raise Failure("cache stats --remote from the environment: exit %d\n%s" % (p.returncode, p.stdout + p.stderr))
    kiln(["cache", "verify"] + base)  # exit 0: every entry good
    redis.command("SET", names[1], b"not kiln's bytes")
    redis.command("SET", "someone:else", b"keep me")
    p = kiln(["cache", "verify"] + base, expect=1)
    bad = [e["key"] for e in json.loads(p.stdout)["entries"] if e["problem"]]
    if bad != [names[1][len("kiln:entry:"):]]:
        raise Failure("cache verify --remote found %s bad, expected %s" % (bad, names[1]))
    kiln(["cache", "prune"] + base)
    if redis.keys() != sorted(set(names) - {names[1]}):
        raise Failure("cache prune --remote should remove the refused entry only: %s" % redis.keys())
    kiln(["cache", "clear"] + base)
    if redis.keys() or redis.command("GET", "someone:else") != b"keep me":
        raise Failure("cache clear --remote should remove kiln's entries and nothing else")
    p = kiln(["cache", "stats", "--remote", "--remote-cache", redis.url()], expect=2)
    if "key file" not in p.stderr:
        raise Failure("cache --remote without a key file should be refused:\n" + p.stderr)
    print("kiln cache --remote: stats, verify (1 bad found), prune (only it), clear (kiln's keys only)")


def config_errors(key):
    """Refused before any work, exit 2, naming the option."""
    url = "redis://127.0.0.1:6379"
    local = ["--graph-compiler-cache-dir", os.path.join(WORK, "local-config")]
    readable = os.path.join(WORK, "readable.key")
    with open(readable, "wb") as f:
        f.write(os.urandom(32))
    os.chmod(readable, 0o644)
    short = os.path.join(WORK, "short.key")
    with open(os.open(short, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
        f.write(b"short")
    cases = [(local + ["--remote-cache", url], "needs a key file"),
             (local + ["--remote-cache", url, "--remote-cache-key-file", readable], "chmod 600"),
             (local + ["--remote-cache", url, "--remote-cache-key-file", short], "16 bytes to 64 KiB"),
             (local + ["--remote-cache", "http://x", "--remote-cache-key-file", key], "is not a Redis address"),
             (["--remote-cache", url, "--remote-cache-key-file", key], "give graph_compiler_cache_dir too"),
             (local + ["--remote-cache-key-file", key], "no remote cache is")]
    for args, said in cases:
        p = kiln(TRAIN + args, expect=2)
        if said not in p.stderr:
            raise Failure("expected %r for %s in:\n%s" % (said, args, p.stderr[-1500:]))
    print("configuration errors: %d cases refused with exit 2" % len(cases))


if __name__ == "__main__":
    try:
        status = main()
        if status == 0:
            config_errors(os.path.join(WORK, "remote.key"))
        sys.exit(status)
    except Failure as e:
        print("FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
