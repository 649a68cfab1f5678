"""users.active and an index on users.name; orders.note; users.legacy and
orders_ref_idx dropped (the operations alembic revision --autogenerate
writes from models.metadata_v1 to metadata_v2)

Revision ID: a1b2c3d4e5f6
Revises:
"""
from alembic import op
import sqlalchemy as sa

revision = "a1b2c3d4e5f6"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("users", sa.Column("active", sa.Boolean(), server_default=sa.text("true"), nullable=False))
    op.create_index("users_name_idx", "users", ["name"], unique=False)
    op.drop_column("users", "legacy")
    op.add_column("orders", sa.Column("note", sa.String(length=200), nullable=True))
    op.drop_index("orders_ref_idx", table_name="orders")


def downgrade():
    op.create_index("orders_ref_idx", "orders", ["ref"], unique=False)
    op.drop_column("orders", "note")
    op.add_column("users", sa.Column("legacy", sa.TEXT(), autoincrement=False, nullable=True))
    op.drop_index("users_name_idx", table_name="users")
    op.drop_column("users", "active")
