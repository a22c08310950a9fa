"""Private PostgreSQL clusters for the tests of the account store on a server: `initdb` into a
temporary directory as an unprivileged user (`nobody` when the suite runs as root: the server
refuses root), trust authentication, a loopback TCP port of its own and a Unix socket, no fsync
(a throw-away cluster: the machine does not crash under it) but synchronous commits — a commit is
acknowledged once its WAL is written, so a server stopped in `immediate` mode (a crash) keeps
every transaction it acknowledged. (With `synchronous_commit = off` it would not: such a server is
a store that loses acknowledged uploads, and the partition checker finds the losses.) Debian's `postgresql` package provides the binaries (scripts/test.sh
installs it)."""
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile


def server_bin() -> pathlib.Path:
    versions = sorted((int(p.name) for p in pathlib.Path("/usr/lib/postgresql").glob("*") if p.name.isdigit()), reverse=True)
    assert versions, "PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin): scripts/test.sh installs it"
    return pathlib.Path(f"/usr/lib/postgresql/{versions[0]}/bin")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """One private cluster. `listen` lists the addresses it listens on (loopback by default; a
    network-namespace test adds its host-side veth addresses); `trust` the networks allowed in."""

    def __init__(self, listen=("127.0.0.1",), trust=("127.0.0.1/32",)):
        self.bin = server_bin()
        # A short path: the Unix socket's name must fit in 107 bytes.
        self.directory = pathlib.Path(tempfile.mkdtemp(prefix="pg-", dir="/tmp"))
        self.owner = "nobody" if os.getuid() == 0 else None
        if self.owner:
            shutil.chown(self.directory, self.owner)
        self.port = free_port()
        self.listen = listen
        self._run(self.bin / "initdb", "-D", self.data, "-U", "authctl", "--auth=trust", "-E", "UTF8", "--no-sync")
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(f"listen_addresses = '{','.join(listen)}'\nport = {self.port}\n"
                       f"unix_socket_directories = '{self.directory}'\nfsync = off\n"
                       "full_page_writes = off\nmax_connections = 200\n")
        with open(self.data / "pg_hba.conf", "a") as hba:
            for network in trust:
                hba.write(f"host all all {network} trust\n")
        self.start()

    @property
    def data(self) -> pathlib.Path:
        return self.directory / "data"

    def address(self, account: str | None = None, host: str = "127.0.0.1", database: str = "postgres") -> str:
        return f"postgresql://authctl@{host}:{self.port}/{database}" + (f"#{account}" if account else "")

    def _run(self, *argv):
        command = [str(a) for a in argv]
        if self.owner:
            command = ["runuser", "-u", self.owner, "--", *command]
        # Output to a file, never a pipe: the server pg_ctl starts would hold a pipe open.
        with open(self.directory / "commands.log", "ab") as log:
            subprocess.run(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, check=True, timeout=120, cwd="/tmp")

    def start(self):
        self._run(self.bin / "pg_ctl", "-D", self.data, "-l", self.directory / "server.log", "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast"):
        self._run(self.bin / "pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop")

    def restart(self):
        self.stop()
        self.start()

    def sql(self, statement: str, database: str = "postgres") -> str:
        """Runs SQL as the superuser; returns psql's unaligned, tuples-only output."""
        command = [str(self.bin / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", str(self.directory),
                   "-p", str(self.port), "-U", "authctl", "-d", database, "-c", statement]
        return subprocess.run(command, capture_output=True, text=True, check=True, timeout=120).stdout

    def destroy(self):
        try:
            self.stop("immediate")
        except Exception:
            pass
        shutil.rmtree(self.directory, ignore_errors=True)
