"""The scheduling queue (``pkg/scheduler/backend/queue``): activeQ, backoffQ, the unschedulable pods,
the nominator, and the QueueingHints that decide which cluster event moves which pod."""
