"""Private PostgreSQL clusters for the tests of the account store on a server: `initdb` into a
temporary directory as an unprivileged user (`nobody` when the suite runs as root: the server
refuses root), trust authentication, a loopback TCP port of its own and a Unix socket, no fsync
(a throw-away cluster: the machine does not crash under it) but synchronous commits — a commit is
acknowledged once its WAL is written, so a server stopped in `immediate` mode (a crash) keeps
every transaction it acknowledged. (With `synchronous_commit = off` it would not: such a server is
a store that loses acknowledged uploads, and the partition checker finds the losses.) Debian's `postgresql` package provides the binaries (scripts/test.sh
installs it).

A cluster can also go back in time as real ones do: `dump` and `restore` (pg_dump and pg_restore of
a database, the backends using it terminated first, as an operator restoring a backup does), and
`replica_of` — an asynchronous streaming replica of another cluster (pg_basebackup -R), which
`promote` makes a primary, missing whatever its primary committed that it had not received."""
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


def lsn_bytes(text: str) -> int:
    """A WAL position (`16/B374D848`) as a number of bytes."""
    high, low = text.strip().split("/")
    return (int(high, 16) << 32) + int(low, 16)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """One private cluster. `listen` lists the addresses it listens on (loopback by default; a
    network-namespace test adds its host-side veth addresses); `trust` the networks allowed in."""

    def __init__(self, listen=("127.0.0.1",), trust=("127.0.0.1/32",), replica_of: "Cluster | None" = None):
        self.bin = server_bin()
        # A short path: the Unix socket's name must fit in 107 bytes.
        self.directory = pathlib.Path(tempfile.mkdtemp(prefix="pg-", dir="/tmp"))
        self.owner = "nobody" if os.getuid() == 0 else None
        if self.owner:
            shutil.chown(self.directory, self.owner)
        self.port = free_port()
        self.listen = listen
        if replica_of:
            # A copy of the primary's data directory (its configuration and pg_hba.conf included:
            # initdb's allows replication from loopback), and its primary_conninfo (-R), through
            # loopback TCP so the link can be cut. What follows in postgresql.conf overrides the
            # primary's port, addresses and socket.
            self._run(self.bin / "pg_basebackup", "-D", self.data, "-h", "127.0.0.1", "-p", replica_of.port, "-U", "authctl",
                      "-R", "-X", "stream", "-c", "fast", "--no-sync")
            with open(self.data / "postgresql.conf", "a") as conf:
                conf.write(f"listen_addresses = '{','.join(listen)}'\nport = {self.port}\n"
                           f"unix_socket_directories = '{self.directory}'\n")
            self.start()
            return
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

    def client(self, program: str, *args) -> subprocess.CompletedProcess:
        """Runs client program `program` (pg_dump, pg_restore) against this cluster's socket as the superuser."""
        command = [str(self.bin / program), "-h", str(self.directory), "-p", str(self.port), "-U", "authctl", *map(str, args)]
        return subprocess.run(command, capture_output=True, text=True, check=True, timeout=120)

    def dump(self, path, database: str = "postgres"):
        """A backup of `database`, as it is at one moment (pg_dump's snapshot), in pg_dump's custom format."""
        self.client("pg_dump", "-Fc", "-f", path, "-d", database)

    def restore(self, path, database: str = "postgres"):
        """`database` as `dump` left it in `path`: the backends using it terminated (the clients
        connect again), then every object of the dump dropped and made again from it, in one
        transaction — a client that connects meanwhile waits on its locks, and sees the database
        either as it was or as restored."""
        self.sql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                 "WHERE datname = current_database() AND pid <> pg_backend_pid()", database)
        self.client("pg_restore", "--clean", "--if-exists", "--single-transaction", "--exit-on-error", "-d", database, path)

    def wal_position(self) -> int:
        """How far this primary's WAL goes (pg_current_wal_lsn), in bytes."""
        return lsn_bytes(self.sql("SELECT pg_current_wal_lsn()"))

    def received_position(self) -> int:
        """How far a replica has received its primary's WAL (pg_last_wal_receive_lsn), in bytes."""
        return lsn_bytes(self.sql("SELECT coalesce(pg_last_wal_receive_lsn(), '0/0')"))

    def promote(self):
        """A replica made a primary (`pg_ctl promote`): it replays what it received, and takes writes."""
        self._run(self.bin / "pg_ctl", "-D", self.data, "-w", "-t", "60", "promote")

    def destroy(self):
        try:
            self.stop("immediate")
        except Exception:
            pass
        shutil.rmtree(self.directory, ignore_errors=True)
