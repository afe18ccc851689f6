"""What an answer task's AWM verifier adds, in AWM's code mode: every fact in the final answer.

Emitted as source after awm_verifier.py's code, only for answer tasks (a change task's verifier
stays as it was), so it uses only re. EXPECTED gains `facts`: [{"value", "type"}]. Numbers are
found with or without thousands separators, dates in ISO form, text after normalisation (case,
punctuation, underscores); worldsmith's own reward also reads written-out dates and 12-hour times.
"""

import re

_verify_state = verify_task_completion  # noqa: F821  (defined by the verifier code above)


def _stated(fact, answer):
    value, kind = fact["value"], fact["type"]
    if kind == "number":
        numbers = re.findall(r"(?<![\w.\-/:])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?", answer)
        return any(abs(float(n.replace(",", "")) - float(value)) <= 1e-9 * max(1.0, abs(float(value)))
                   for n in numbers)
    if kind in ("date", "datetime"):
        day, _, clock = str(value).partition("T")
        return day in answer and (kind == "date" or clock[:5] in answer)

    def norm(text):
        return " ".join(re.sub(r"[^\w\s]|_", " ", re.sub(r"['`]", "", str(text).casefold())).split())

    return (" " + norm(value) + " ") in (" " + norm(answer) + " ")


def verify_task_completion(initial_db_path, final_db_path, final_answer=""):
    result = _verify_state(initial_db_path, final_db_path, final_answer)
    missing = [f["value"] for f in EXPECTED["facts"] if not _stated(f, final_answer or "")]  # noqa: F821
    total = result["total"] + len(EXPECTED["facts"])  # noqa: F821
    passed = result["passed"] + len(EXPECTED["facts"]) - len(missing)  # noqa: F821
    failed = result["failed"] + [f"fact not in the final answer: {v!r}" for v in missing]
    return {"result": "complete" if passed == total else "others", "passed": passed, "total": total,
            "failed": failed[:20]}
