"""Parses a Prometheus text-format file with prometheus_client's own parser and prints
its samples as JSON, for the integration tests:
{"families": {NAME: {"type": T, "help": H}}, "samples": [{"name", "labels", "value"}]}"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

with open(sys.argv[1], encoding="utf-8") as f:
    text = f.read()
families = {}
samples = []
for family in text_string_to_metric_families(text):
    families[family.name] = {"type": family.type, "help": family.documentation}
    for sample in family.samples:
        samples.append({"name": sample.name, "labels": sample.labels, "value": sample.value})
print(json.dumps({"families": families, "samples": samples}))
