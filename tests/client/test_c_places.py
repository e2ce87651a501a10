"""A C program's pipelined error names which of its thread's calls made it (C lines are out of Python's sight)."""

import threading

from client.core import c_call, c_place


def test_c_calls_are_counted_per_thread_and_function() -> None:
    seen: dict[str, list[str]] = {}

    def program(label: str, calls: int) -> None:
        places = seen.setdefault(label, [c_place()])
        for _ in range(calls):
            c_call("aclnnAdd")
            places.append(c_place())
        c_call("aclrtSynchronizeStream")
        places.append(c_place())

    threads = [threading.Thread(target=program, args=(label, n)) for label, n in (("a", 23), ("b", 2))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    a, b = seen["a"], seen["b"]
    assert a[0] == "" and b[0] == ""  # no C call yet: nothing to name
    ordinals = [place.split(" ")[1] for place in a[1:-1]]
    assert ordinals[:4] == ["1st", "2nd", "3rd", "4th"] and ordinals[10:13] == ["11th", "12th", "13th"]
    assert ordinals[20:] == ["21st", "22nd", "23rd"]
    assert a[-1] == b[-1] == "the 1st aclrtSynchronizeStream call of this thread"
    assert b[1:3] == ["the 1st aclnnAdd call of this thread", "the 2nd aclnnAdd call of this thread"]
