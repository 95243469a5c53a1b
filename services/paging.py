"""The pagination block of every paged list."""
import math


def pagination(page, page_size, total):
    return {"page": page, "pageSize": page_size, "total": total, "totalPages": math.ceil(total / page_size)}
