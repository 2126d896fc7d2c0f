"""The JSON API for scripts under /api/v1/ (docs/api.md).

Thin Django REST framework views over the same services, forms and access rules as the pages:
what a page would refuse, the API refuses with the same words, as JSON naming the field.
"""
