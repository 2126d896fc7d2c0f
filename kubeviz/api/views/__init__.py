"""The API's views, one module per area: documents (scenarios, policies), runs, comparisons."""
