"""The pagination block of every paged list."""

import math


def pagination(page: int, page_size: int, total: int) -> dict[str, int]:
    return {"page": page, "pageSize": page_size, "total": total, "totalPages": math.ceil(total / page_size)}
