"""A throwaway PostgreSQL cluster for the tests: Debian's `postgresql` binaries (installed by .ci/run),
`initdb` into a temporary folder, `pg_ctl` on a free port, one fresh database per test, removed at the end.

Durability is switched off (fsync, synchronous_commit): the cluster lives for one test session.
"""

import glob
import os
import shutil
import socket
import subprocess
import uuid
from pathlib import Path

BIN_GLOB = "/usr/lib/postgresql/*/bin"
_EMPTY_EVERY_TABLE = """DO $$ DECLARE name text; BEGIN
  SET LOCAL lock_timeout = '10s';
  SET LOCAL session_replication_role = replica;
  FOR name IN SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_version' LOOP
    EXECUTE format('DELETE FROM %I', name);
  END LOOP;
  FOR name IN SELECT sequencename FROM pg_sequences WHERE schemaname = 'public' LOOP
    EXECUTE format('ALTER SEQUENCE %I RESTART', name);
  END LOOP;
END $$"""


def binaries() -> Path | None:
    found = sorted(glob.glob(BIN_GLOB), key=lambda path: int(Path(path).parent.name))
    return Path(found[-1]) if found and (Path(found[-1]) / "initdb").exists() else None


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Cluster:
    def __init__(self, folder: Path):
        self.bin = binaries()
        if self.bin is None:
            raise FileNotFoundError("PostgreSQL is not installed (apt-get install postgresql; .ci/run does it)")
        self.folder, self.port = folder, _free_port()
        self._made: set[str] = set()
        self.data = folder / "data"
        # initdb refuses to run as root: the cluster then belongs to the `postgres` user the package made.
        self.run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.run_as:
            shutil.chown(folder, "postgres")

    def _run(self, *command):
        done = subprocess.run([*self.run_as, *command], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stdout}{done.stderr}")

    def start(self) -> "Cluster":
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        )
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
        )
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"), "-w", "start"
        )
        return self

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def url(self, name: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def _admin(self, sql: str, database: str = "postgres") -> list:
        import psycopg2

        connection = psycopg2.connect(host="127.0.0.1", port=self.port, user="postgres", dbname=database)
        try:
            connection.autocommit = True
            cursor = connection.cursor()
            cursor.execute(sql)
            return cursor.fetchall() if cursor.description else []
        finally:
            connection.close()

    def emptied(self, name: str) -> str:
        """Database `name`, created on first use, then with every row deleted and every sequence
        restarted (schema_version kept, so the next start finds its schema). DELETE with the foreign
        keys' triggers off: a test's few rows go ~6x faster than TRUNCATE's new file per table."""
        if name not in self._made:
            self._admin(f"CREATE DATABASE {name}")
            self._made.add(name)
            return name
        self._admin(_EMPTY_EVERY_TABLE, name)
        return name

    def create_database(self) -> str:
        name = "test_" + uuid.uuid4().hex[:16]
        self._admin(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        self._admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
