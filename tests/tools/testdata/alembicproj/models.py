"""The schema before (metadata_v1) and after (metadata_v2) the Alembic
migration in versions/."""
from sqlalchemy import (Boolean, Column, DateTime, ForeignKey, Index, Integer, MetaData, Numeric, String, Table, Text,
                        UniqueConstraint, func, text)

metadata_v1 = MetaData()
Table("users", metadata_v1,
      Column("id", Integer, primary_key=True),
      Column("email", String(100), nullable=False, unique=True),
      Column("name", String(50)),
      Column("status", String(10), nullable=False, server_default="new"),
      Column("created", DateTime(timezone=True), nullable=False, server_default=func.now()),
      Column("legacy", Text))
Table("orders", metadata_v1,
      Column("id", Integer, primary_key=True),
      Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
      Column("ref", String(20), nullable=False),
      Column("total", Numeric(10, 2), nullable=False, server_default=text("0")),
      UniqueConstraint("user_id", "ref", name="orders_user_ref"),
      Index("orders_ref_idx", "ref"))

metadata_v2 = MetaData()
Table("users", metadata_v2,
      Column("id", Integer, primary_key=True),
      Column("email", String(100), nullable=False, unique=True),
      Column("name", String(50)),
      Column("status", String(10), nullable=False, server_default="new"),
      Column("created", DateTime(timezone=True), nullable=False, server_default=func.now()),
      Column("active", Boolean, nullable=False, server_default=text("true")),
      Index("users_name_idx", "name"))
Table("orders", metadata_v2,
      Column("id", Integer, primary_key=True),
      Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
      Column("ref", String(20), nullable=False),
      Column("total", Numeric(10, 2), nullable=False, server_default=text("0")),
      Column("note", String(200)),
      UniqueConstraint("user_id", "ref", name="orders_user_ref"))
