"""Test hosts on one machine, for jobs across hosts (tests/dist/mpi_train.py).

Each host is a network namespace with its own address (10.77.0.<i+1>/24 on eth0), joined
to the others by a veth pair into a bridge that lives in a namespace of its own; nothing
of it touches the machine's own network. mpirun runs on host 0 (its network namespace, the
machine's files) and starts Open MPI's daemon on every other host through a launch agent
(plm_rsh_agent) that enters that host's namespaces: its network, a host name of its own
(Open MPI keys its session files by host name), and a mount namespace in which each of
`private` directories is an empty tmpfs, so no host sees another's model
directory or compile cache — nothing is shared but what the test shares on purpose (kiln
and the data set). Everything is removed when the `with` block ends, also on failure, and
namespaces a killed earlier run left behind are removed first.

    with Hosts(3, work, private=[dir]) as h:
        subprocess.run(h.mpirun(3) + [kiln, "train", ...])
"""
import os
import re
import shutil
import subprocess

PREFIX = "kilnh"


def available():
    """Why test hosts cannot be made here ("" when they can): they need root, iproute2
    and mount namespaces."""
    if os.geteuid() != 0:
        return "test hosts need root (network and mount namespaces)"
    if not shutil.which("ip") or not shutil.which("unshare"):
        return "test hosts need iproute2's ip and util-linux's unshare"
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        return "mount namespaces are not available here (unshare -m failed)"
    return ""


def _ip(*args, check=True):
    return subprocess.run(["ip"] + list(args), capture_output=True, text=True, check=check)


def remove_stale():
    """Namespaces of earlier runs whose process is gone."""
    listing = _ip("netns", "list", check=False).stdout
    for name in re.findall(r"^(%s(\d+)\w+)" % PREFIX, listing, re.M):
        ns, pid = name
        if not os.path.exists("/proc/%s" % pid):
            _ip("netns", "del", ns, check=False)


class Hosts:
    def __init__(self, n, work, private=()):
        self.n = n
        self.tag = "%s%d" % (PREFIX, os.getpid())
        self.work = work
        self.private = [os.path.abspath(p) for p in private]
        self.addresses = ["10.77.0.%d" % (i + 1) for i in range(n)]
        self.names = ["%sh%d" % (self.tag, i) for i in range(n)]
        self.switch = self.tag + "sw"
        self.agent = os.path.join(work, "launch-agent.sh")

    def __enter__(self):
        remove_stale()
        try:
            self._make()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _make(self):
        _ip("netns", "add", self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        for i, (ns, addr) in enumerate(zip(self.names, self.addresses)):
            _ip("netns", "add", ns)
            veth = "%sv%d" % (self.tag[-6:], i)  # interface names: at most 15 characters
            _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("link", "set", veth, "netns", self.switch)
            _ip("-n", self.switch, "link", "set", veth, "master", "br0", "up")
            _ip("-n", ns, "addr", "add", addr + "/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        for d in self.private:
            os.makedirs(d, exist_ok=True)
        cases = "\n".join("  %s) ns=%s; name=kiln-host%d ;;" % (a, ns, i)
                          for i, (a, ns) in enumerate(zip(self.addresses, self.names)))
        mounts = "".join("mount -t tmpfs kiln-host '%s' && " % d for d in self.private)
        # rsh's way: AGENT HOST COMMAND...; the command is one shell line.
        with open(self.agent, "w") as f:
            f.write("#!/bin/sh\nhost=\"$1\"; shift\ncase \"$host\" in\n%s\n"
                    "  *) echo \"launch agent: no test host $host\" >&2; exit 1 ;;\nesac\n"
                    "exec ip netns exec \"$ns\" unshare -m -u sh -c \"hostname $name && %sexec $*\"\n"
                    % (cases, mounts))
        os.chmod(self.agent, 0o755)

    def __exit__(self, *exc):
        for ns in self.names + [self.switch]:
            _ip("netns", "del", ns, check=False)
        return False

    def mpirun(self, ranks, per_host=1):
        """mpirun on host 0 for `ranks` ranks, `per_host` on each host in turn, over TCP
        between the hosts' addresses."""
        hosts = ",".join("%s:%d" % (a, per_host) for a in self.addresses)
        # --bind-to none: every test host sees the same cores, and binding would pin each
        # host's first rank to the same one.
        return ["ip", "netns", "exec", self.names[0], "mpirun", "--allow-run-as-root", "--bind-to", "none", "-H", hosts,
                "-np", str(ranks),
                "--mca", "plm_rsh_agent", self.agent, "--mca", "btl", "tcp,self",
                "--mca", "btl_tcp_if_include", "10.77.0.0/24", "--mca", "oob_tcp_if_include", "10.77.0.0/24"]
