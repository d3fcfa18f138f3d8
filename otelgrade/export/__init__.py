"""Export: grades in; Prometheus counters, result sinks (JSONL, OTLP, webhook, archive) and the grades page out."""
