from django.db import models


class Category(models.Model):
    name = models.CharField(max_length=50, unique=True)


class Tag(models.Model):
    id = models.BigAutoField(primary_key=True)
    label = models.CharField(max_length=30)
    parent = models.ForeignKey("self", null=True, on_delete=models.SET_NULL, related_name="children")


class Product(models.Model):
    id = models.BigAutoField(primary_key=True)
    category = models.ForeignKey(Category, on_delete=models.CASCADE, related_name="products")
    sku = models.CharField(max_length=20)
    name = models.CharField(max_length=100, default="unnamed")
    price = models.DecimalField(max_digits=10, decimal_places=2)
    stock = models.IntegerField(default=0)
    attrs = models.JSONField(default=dict)
    created = models.DateTimeField(auto_now_add=True)
    discontinued = models.BooleanField(default=False)
    tags = models.ManyToManyField(Tag, related_name="products")

    class Meta:
        unique_together = [("category", "sku")]
        indexes = [
            models.Index(fields=["sku", "price"], name="product_sku_price_idx"),
        ]
        constraints = [models.CheckConstraint(check=models.Q(stock__gte=0), name="stock_nonneg")]


class Review(models.Model):
    product = models.ForeignKey(Product, on_delete=models.CASCADE)
    author = models.CharField(max_length=40)
    stars = models.SmallIntegerField()
    text = models.TextField(blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["product", "author"], name="one_review_per_author")]
