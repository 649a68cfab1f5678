"""Runs a Django project end to end against the database in PGHOST,
PGPORT, PGUSER and PGDATABASE: migrate (Django's contrib apps and the shop
app's two migrations), ORM reads and writes, then migrate every app back
to zero (auth's reverse migrations lower varchar limits) and forward
again.
Prints one "check: value" line per step, so that tests/tools can compare
the output between streamdb and PostgreSQL.

Invoked as: python3 run.py
"""
import os
import sys
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import IntegrityError, connection, transaction  # noqa: E402
from django.db.models import Count, Max, Sum  # noqa: E402


def check(name, value):
    print(f"{name}: {value}", flush=True)


def migrate(*args):
    call_command("migrate", *args, verbosity=0, interactive=False)


migrate("shop", "0001")
migrate()
from django.contrib.auth.models import Group, Permission, User  # noqa: E402
from django.contrib.contenttypes.models import ContentType  # noqa: E402
from shop.models import Category, Product, Review, Tag  # noqa: E402

with connection.cursor() as cur:
    check("tables", sorted(connection.introspection.table_names(cur)))
    check("product columns", [c.name for c in connection.introspection.get_table_description(cur, "shop_product")])
    cons = connection.introspection.get_constraints(cur, "shop_product")
    check("product indexes", sorted(n for n, c in cons.items() if c["index"] and not c["primary_key"] and not c["unique"]))
    check("product unique", sorted(tuple(c["columns"]) for c in cons.values() if c["unique"]))
    check("product checks", sorted(n for n, c in cons.items() if c["check"]))
    check("product fks", sorted((tuple(c["columns"]), c["foreign_key"]) for c in cons.values() if c["foreign_key"]))
    check("review columns", [c.name for c in connection.introspection.get_table_description(cur, "shop_review")])
    check("category columns", [c.name for c in connection.introspection.get_table_description(cur, "shop_category")])

check("content types", ContentType.objects.filter(app_label="shop").count())
check("permissions", Permission.objects.filter(content_type__app_label="shop").count())
u = User.objects.create_user("ann", "ann@example.com", "secret")
g = Group.objects.create(name="staff")
u.groups.add(g)
check("user", (u.id, u.username, list(u.groups.values_list("name", flat=True))))

books = Category.objects.create(name="books")
games = Category.objects.create(name="games")
red = Tag.objects.create(label="red")
blue = Tag.objects.create(label="blue")
p1 = Product.objects.create(category=books, sku="b-1", name="Dune", price=Decimal("9.99"), stock=3, attrs={"pages": 412})
p2 = Product.objects.create(category=books, sku="b-2", price=Decimal("12.50"), attrs={"tags": ["new"]})
p3 = Product.objects.create(category=games, sku="g-1", name="Go", price=Decimal("30.00"), stock=1)
blue.parent = red
blue.save()
p1.tags.add(red, blue)
p3.tags.add(red)
Review.objects.create(product=p1, author="ann", stars=5, text="great")
Review.objects.create(product=p1, author="bob", stars=3)
check("ids", [c.id for c in Category.objects.order_by("id")] + [p.id for p in Product.objects.order_by("id")])
check("defaults", list(Product.objects.filter(id=p2.id).values_list("name", "stock", "discontinued", "attrs")))
check("created set", all(p.created is not None for p in Product.objects.all()))
check("filter", list(Product.objects.filter(price__gt=10).order_by("sku").values_list("sku", flat=True)))
check("filter like", list(Product.objects.filter(sku__startswith="b").order_by("sku").values_list("sku", flat=True)))
check("json key", list(Product.objects.filter(attrs__pages=412).values_list("sku", flat=True)))
check("select_related", [(r.author, r.product.name, r.product.category.name) for r in Review.objects.select_related("product__category").order_by("author")])
check("m2m", sorted(Product.objects.filter(tags__label="red").values_list("sku", flat=True)))
check("prefetch", [(p.sku, sorted(t.label for t in p.tags.all())) for p in Product.objects.prefetch_related("tags").order_by("sku")])
check("tag tree", list(Tag.objects.filter(parent__label="red").values_list("label", "parent__label")))
with transaction.atomic():
    connection.check_constraints()  # SET CONSTRAINTS ALL IMMEDIATE, then DEFERRED
    check("check_constraints", "ok")
check("aggregate", Product.objects.aggregate(n=Count("id"), total=Sum("price"), top=Max("stock")))
check("annotate", list(Category.objects.annotate(n=Count("products")).order_by("name").values_list("name", "n")))

check("update", Product.objects.filter(category=books).update(stock=10))
p3.name = "Go (boxed)"
p3.save()
check("after update", list(Product.objects.order_by("sku").values_list("sku", "name", "stock")))

try:
    Product.objects.create(category=books, sku="b-1", price=1)
except IntegrityError as e:
    check("unique_together", type(e).__name__)
try:
    with transaction.atomic():
        Product.objects.create(category=books, sku="b-9", price=1, stock=-1)
except IntegrityError as e:
    check("check constraint", type(e).__name__)
try:
    with transaction.atomic():
        Review.objects.create(product=p1, author="ann", stars=1)
except IntegrityError as e:
    check("unique constraint", type(e).__name__)

try:
    with transaction.atomic():
        Product.objects.create(category=games, sku="g-2", price=5)
        Product.objects.filter(sku="g-1").update(stock=99)
        raise RuntimeError("roll back")
except RuntimeError:
    pass
check("after rollback", list(Product.objects.order_by("sku").values_list("sku", "stock")))
with transaction.atomic():
    Product.objects.create(category=games, sku="g-3", price=7)
    try:
        with transaction.atomic():
            Product.objects.create(category=games, sku="g-4", price=8)
            raise RuntimeError("roll back to the savepoint")
    except RuntimeError:
        pass
check("savepoint", list(Product.objects.order_by("sku").values_list("sku", flat=True)))

check("delete cascade", Category.objects.filter(name="books").delete())
check("left", (Product.objects.count(), Review.objects.count(), Product.tags.through.objects.count()))
check("delete", Product.objects.filter(sku="g-3").delete())
check("set null", (Tag.objects.filter(label="red").delete(), list(Tag.objects.values_list("label", "parent"))))

migrate("shop", "zero")
with connection.cursor() as cur:
    check("tables after shop zero", sorted(t for t in connection.introspection.table_names(cur) if t.startswith("shop")))
# auth's reverse migrations lower varchar limits (max_length 150 back to
# 30) over rows that fit them.
for app in ["admin", "sessions", "auth", "contenttypes"]:
    migrate(app, "zero")
with connection.cursor() as cur:
    check("tables after zero", sorted(connection.introspection.table_names(cur)))
migrate()
with connection.cursor() as cur:
    check("tables after migrating again", sorted(connection.introspection.table_names(cur)))
    cur.execute("SELECT column_name, character_maximum_length FROM information_schema.columns"
                " WHERE table_name = 'auth_user' ORDER BY ordinal_position")
    check("auth_user columns again", cur.fetchall())
check("permissions again", Permission.objects.filter(content_type__app_label="shop").count())
u = User.objects.create_user("again", "again@example.com", "pw")
check("user again", (User.objects.filter(username="again").count(), u.check_password("pw")))
