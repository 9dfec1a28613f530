"""The lane's PostgreSQL: one embedded server (tests/pg_server.py) per project, each behind a
TLS front (``e2e/pgtls.py``) whose certificate the session's lane CA issued.

One server per project, not one for the session: the stacks share gateway names (the
predictions' and sign-in projects are made from the same committed stacks as the three
deployed ones), so they would share role and database names ``gw_<gateway>``. Each server
gets the project's admin roles as a managed server hands them out (RDS, IBM Cloud Databases):
``LOGIN CREATEROLE CREATEDB``, not superuser, with the lane's ``dbAdminPassword``
(``e2e.project.admins``). The bootstrap superuser (``pg_server.SUPERUSER``, on the private
Unix socket) is the tests' own way in, to look and to set up what upstream would have made.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow

from e2e import pgtls
from e2e.project import LaneDatabase
from tests import pg_server

ADMIN_ATTRIBUTES = "LOGIN CREATEROLE CREATEDB"


@dataclass
class StackDatabase:
    server: pg_server.Server
    front: pgtls.Front
    admins: dict[str, str]
    """Admin user → password."""

    def superuser(self, dbname: str = "postgres") -> psycopg.Connection[TupleRow]:
        return self.server.superuser(dbname)

    def login(self, ca: Path, user: str, password: str, dbname: str) -> str:
        """``user@dbname`` as the server reports the session, or the server's refusal, over
        the TLS front with ``sslmode=verify-full`` and ``ca``, as the program's providers
        connect."""
        try:
            with psycopg.connect(
                host=pgtls.HOSTNAME,
                port=self.front.port,
                user=user,
                password=password,
                dbname=dbname,
                sslmode="verify-full",
                sslrootcert=str(ca),
                connect_timeout=10,
            ) as conn:
                row = conn.execute("SELECT current_user, current_database()").fetchone()
                assert row is not None
                return f"{row[0]}@{row[1]}"
        except psycopg.OperationalError as error:
            text = str(error)
            for reason in ("password authentication failed", "permission denied for database"):
                if reason in text:
                    return reason
            return text


class LaneDatabases:
    """``e2e.project.database_for`` for the session (tests/e2e/conftest.py)."""

    def __init__(self) -> None:
        self.authority = pgtls.make_ca()
        self.by_stack: dict[str, StackDatabase] = {}
        self._all: list[StackDatabase] = []

    def __call__(self, stack: str, admins: Mapping[str, str]) -> LaneDatabase:
        server = pg_server.start()
        try:
            with server.superuser() as su:
                for user, password in admins.items():
                    su.execute(
                        sql.SQL("CREATE ROLE {} " + ADMIN_ATTRIBUTES + " PASSWORD {}").format(
                            sql.Identifier(user), sql.Literal(password)
                        )
                    )
            front = pgtls.Front(server.port, self.authority)
        except BaseException:
            pg_server.stop(server)
            raise
        made = StackDatabase(server, front, dict(admins))
        self.by_stack[stack] = made  # a project made again gets a fresh server
        self._all.append(made)
        return LaneDatabase(pgtls.HOSTNAME, front.port, self.authority.ca_pem)

    def close(self) -> None:
        for made in self._all:
            made.front.close()
            pg_server.stop(made.server)
        self._all.clear()
