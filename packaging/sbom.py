"""One CycloneDX SBOM for a release archive or image, from what its binaries carry.

Usage: sbom.py OUT NAME VERSION BINARY...

Each binary is built with `cargo auditable`, so it carries the list of crates it was
built from; `auditable2cdx` (from the cargo-auditable project) turns that list into a
CycloneDX document. This script puts the documents of an archive's binaries into one,
named for the archive (or image), with the CycloneDX project's own Python library, and
refuses to write one its strict JSON schema validation does not pass.
"""

import json
import subprocess
import sys

from cyclonedx.model.bom import Bom
from cyclonedx.model.component import ComponentType
from cyclonedx.output.json import JsonV1Dot6
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator


def binary_document(path: str) -> dict:
    """`auditable2cdx`'s document for one binary, its references made global: the tool
    numbers components per binary, so two binaries' "0" are different crates. A crate is
    named by its package URL (`pkg:cargo/NAME@VERSION`), the binary itself included (the
    tool gives a path crate a URL with a redacted download location)."""
    out = subprocess.run(["auditable2cdx", path], check=True, capture_output=True, text=True)
    doc = json.loads(out.stdout)
    root = doc["metadata"]["component"]
    parts = [root] + doc.get("components", [])
    refs = {}
    for part in parts:
        purl = f"pkg:cargo/{part['name']}@{part['version']}"
        refs[part["bom-ref"]] = purl
        part["bom-ref"] = purl
        part["purl"] = purl
    for dependency in doc.get("dependencies", []):
        dependency["ref"] = refs[dependency["ref"]]
        dependency["dependsOn"] = [refs[r] for r in dependency.get("dependsOn", [])]
    return doc


def main() -> int:
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    out, name, version, binaries = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    components = {}
    depends = {}
    roots = []
    for path in binaries:
        doc = binary_document(path)
        root = doc["metadata"]["component"]
        roots.append(root["bom-ref"])
        for part in [root] + doc.get("components", []):
            components.setdefault(part["bom-ref"], part)
        # Features may differ between the binaries: a crate depends on the union.
        for dependency in doc.get("dependencies", []):
            depends.setdefault(dependency["ref"], set()).update(dependency["dependsOn"])
    ref = f"{name}@{version}"
    depends[ref] = set(roots)
    merged = {
        "bomFormat": "CycloneDX",
        "specVersion": "1.3",
        "metadata": {"component": {"type": "application", "bom-ref": ref, "name": name, "version": version}},
        "components": list(components.values()),
        "dependencies": [{"ref": r, "dependsOn": sorted(d)} for r, d in sorted(depends.items())],
    }
    bom = Bom.from_json(merged)  # type: ignore[attr-defined]
    text = JsonV1Dot6(bom).output_as_string(indent=2)
    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    if error is not None:
        print(f"{out}: not a valid CycloneDX 1.6 document: {error}", file=sys.stderr)
        return 1
    with open(out, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    crates = sum(1 for c in bom.components if c.type == ComponentType.LIBRARY)
    print(f"{out}: CycloneDX 1.6, {len(binaries)} binaries, {crates} crates, valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
