"""Parses a Prometheus text exposition on stdin with the Prometheus project's own Python
parser (prometheus_client.parser) and prints every sample as JSON, one list:
[{"family", "type", "name", "labels", "value"}]. A text the parser refuses fails here."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

samples = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        samples.append({
            "family": family.name,
            "type": family.type,
            "name": s.name,
            "labels": s.labels,
            "value": s.value,
        })
json.dump(samples, sys.stdout)
