"""Renderings of a result (results.json shape): the terminal table and the class CSV."""
import csv
import io

PARTS = ("simple_attention", "self_attention", "causal_attention", "multihead_attention", "exercises")


def _in_order(parts):
    return sorted(parts, key=lambda p: (PARTS.index(p) if p in PARTS else len(PARTS), p))


def table(result, title):
    """The per-part table with one line of feedback for each failed check."""
    lines = [f"{title}  (isolation: {result['extra_data'].get('isolation')})"]
    if result.get("output"):
        lines += [f"  note: {line}" for line in result["output"].splitlines()]
    parts = result["extra_data"]["parts"]
    width = max(len(p) for p in parts)
    lines.append(f"  {'part':<{width}}  points")
    for part in _in_order(parts):
        got, most = parts[part]
        lines.append(f"  {part:<{width}}  {got:>3}/{most:<3} {'ok' if got == most else ''}")
    lines.append(f"  {'total':<{width}}  {result['score']:>3}/{result['max_score']}")
    failed = [t for t in result["tests"] if t["status"] != "passed"]
    # A part whose every check hit the stub's NotImplementedError gets one line, not one per check.
    unwritten = {p for p in parts if all("NotImplementedError" in t["output"]
                                         for t in result["tests"] if t["part"] == p and t["status"] != "passed")
                 and parts[p][0] == 0}
    if failed:
        lines.append("  failed checks:")
        for part in _in_order(unwritten):
            lines.append(f"  - {part}: not written yet (the stubs still raise NotImplementedError)")
        for test in failed:
            if test["part"] not in unwritten:
                lines.append(f"  - {test['name']} (0/{test['max_score']})")
                lines.append(f"      {test['output']}")
    return "\n".join(lines)


def class_csv(rows):
    """rows: (student, result or None, status). One line per student, parts as columns."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["student", "score", "max_score", *PARTS, "status"])
    for student, result, status in rows:
        if result is None:
            writer.writerow([student, 0, "", *[""] * len(PARTS), status])
            continue
        parts = result["extra_data"]["parts"]
        writer.writerow([student, result["score"], result["max_score"],
                         *[parts.get(p, ["", ""])[0] for p in PARTS], status])
    return out.getvalue()
