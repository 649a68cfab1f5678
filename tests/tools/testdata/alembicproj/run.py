"""Runs SQLAlchemy and Alembic end to end against the database in PGHOST,
PGPORT, PGUSER and PGDATABASE: metadata.create_all, Alembic's
autogenerate comparison against the live database, upgrade and
downgrade of the migration in versions/, and ORM session reads and
writes. Prints one "check: value" line per step, so that tests/tools can
compare the output between streamdb and PostgreSQL.

Invoked as: python3 run.py
"""
import os
import sys
from decimal import Decimal

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, func, inspect, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, declarative_base, relationship

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from models import metadata_v1, metadata_v2  # noqa: E402

url = "postgresql+psycopg2://{}@{}:{}/{}".format(os.environ["PGUSER"], os.environ["PGHOST"], os.environ["PGPORT"],
                                                 os.environ["PGDATABASE"])
engine = create_engine(url, future=True)


def check(name, value):
    print(f"{name}: {value}", flush=True)


def describe(diff):
    """A diff entry of compare_metadata as plain values."""
    if isinstance(diff, list):
        return [describe(d) for d in diff]
    op, *args = diff
    out = [op]
    for a in args:
        if hasattr(a, "table") and hasattr(a, "name") and not hasattr(a, "columns"):
            out.append(f"{a.table.name}.{a.name}")  # a Column
        elif hasattr(a, "name") and hasattr(a, "columns") and hasattr(a, "table") and a.table is not None:
            out.append(f"{a.name}({', '.join(c.name for c in a.columns)})")  # an Index or constraint
        elif hasattr(a, "name") and hasattr(a, "columns"):
            out.append(a.name)  # a Table
        else:
            out.append(repr(a) if not isinstance(a, str) else a)
    return tuple(out)


def diff_with(metadata):
    with engine.connect() as conn:
        mc = MigrationContext.configure(conn, opts={"compare_type": True, "compare_server_default": False})
        diffs = [describe(d) for d in compare_metadata(mc, metadata) if not (isinstance(d, tuple) and d[1:2] and
                                                                            getattr(d[1], "name", "") == "alembic_version")]
        return sorted(map(str, diffs))


def schema():
    insp = inspect(engine)
    out = {}
    for t in sorted(insp.get_table_names()):
        out[t] = {
            "columns": [(c["name"], str(c["type"]), c["nullable"], c["default"] is not None) for c in insp.get_columns(t)],
            "pk": insp.get_pk_constraint(t)["constrained_columns"],
            "fks": [(f["constrained_columns"], f["referred_table"], f["referred_columns"], f.get("options", {}).get("ondelete"))
                    for f in insp.get_foreign_keys(t)],
            "unique": sorted((u["name"], tuple(u["column_names"])) for u in insp.get_unique_constraints(t)),
            "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"])) for i in insp.get_indexes(t)),
        }
    return out


metadata_v1.create_all(engine)
check("create_all tables", sorted(inspect(engine).get_table_names()))
for t, s in schema().items():
    check(f"v1 {t}", s)
check("v1 diff against v1", diff_with(metadata_v1))
check("autogenerate diff", diff_with(metadata_v2))

cfg = Config()
cfg.set_main_option("script_location", here)
with engine.begin() as conn:
    cfg.attributes["connection"] = conn
    command.upgrade(cfg, "head")
with engine.connect() as conn:
    check("alembic_version", conn.execute(select(func.count()).select_from(
        __import__("sqlalchemy").table("alembic_version"))).scalar_one())
check("upgraded diff against v2", diff_with(metadata_v2))
for t, s in schema().items():
    check(f"v2 {t}", s)

Base = declarative_base(metadata=metadata_v2)


class User(Base):
    __table__ = metadata_v2.tables["users"]
    orders = relationship("Order", back_populates="user", cascade="all, delete-orphan", passive_deletes=True,
                          order_by="Order.ref")


class Order(Base):
    __table__ = metadata_v2.tables["orders"]
    user = relationship("User", back_populates="orders")


with Session(engine, future=True) as s:
    ann = User(email="ann@example.com", name="ann")
    bob = User(email="bob@example.com", name="bob", status="vip")
    ann.orders = [Order(ref="a-1", total=Decimal("9.50")), Order(ref="a-2")]
    bob.orders = [Order(ref="b-1", total=Decimal("20.00"), note="gift")]
    s.add_all([ann, bob])
    s.commit()
    check("ids", [(u.id, [o.id for o in u.orders]) for u in s.scalars(select(User).order_by(User.id))])
    check("server defaults", [(u.name, u.status, u.active, u.created is not None)
                              for u in s.scalars(select(User).order_by(User.id))])
    check("order defaults", [(o.ref, o.total, o.note) for o in s.scalars(select(Order).order_by(Order.ref))])
    check("join", s.execute(select(User.name, func.count(Order.id), func.sum(Order.total)).join(Order)
                            .group_by(User.name).order_by(User.name)).all())
    ann.status = "gold"
    s.get(Order, 2).total = Decimal("1.25")
    s.commit()
    check("updated", s.execute(select(User.name, User.status).order_by(User.id)).all())
    s.add(Order(user_id=ann.id, ref="a-1"))
    try:
        s.commit()
    except IntegrityError as e:
        s.rollback()
        check("unique", e.orig.pgcode)
    s.add(User(email="ann@example.com"))
    try:
        s.commit()
    except IntegrityError as e:
        s.rollback()
        check("unique email", e.orig.pgcode)
    s.add(Order(user_id=999, ref="x"))
    try:
        s.commit()
    except IntegrityError as e:
        s.rollback()
        check("foreign key", e.orig.pgcode)
    with s.begin_nested():
        s.add(Order(user_id=bob.id, ref="b-2"))
    try:
        with s.begin_nested():
            s.add(Order(user_id=bob.id, ref="b-3"))
            s.flush()
            raise RuntimeError("roll back to the savepoint")
    except RuntimeError:
        pass
    s.commit()
    check("savepoints", s.scalars(select(Order.ref).order_by(Order.ref)).all())
    s.delete(s.get(User, ann.id))
    s.commit()
    check("delete cascade", s.execute(select(Order.ref, Order.user_id).order_by(Order.ref)).all())

with engine.begin() as conn:
    cfg.attributes["connection"] = conn
    command.downgrade(cfg, "base")
check("downgraded diff against v1", diff_with(metadata_v1))
with engine.connect() as conn:
    check("rows after downgrade", conn.execute(select(metadata_v1.tables["users"].c.email, metadata_v1.tables["users"].c.legacy)
                                                .order_by(metadata_v1.tables["users"].c.id)).all())
metadata_v1.drop_all(engine)
with engine.begin() as conn:
    conn.exec_driver_sql("DROP TABLE alembic_version")
check("tables after drop_all", sorted(inspect(engine).get_table_names()))
