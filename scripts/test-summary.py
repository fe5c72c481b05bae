#!/usr/bin/env python3
"""Print one closing line, 'N passed, N failed, N skipped', over meson test logs."""
import json
import os
import sys

counts = {"passed": 0, "failed": 0, "skipped": 0}
for build in sys.argv[1:]:
    log = os.path.join(build, "meson-logs", "testlog.json")
    if not os.path.exists(log):
        continue
    with open(log) as f:
        for line in f:
            result = json.loads(line).get("result", "")
            if result in ("OK", "EXPECTEDFAIL"):
                counts["passed"] += 1
            elif result == "SKIP":
                counts["skipped"] += 1
            else:
                counts["failed"] += 1
print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
