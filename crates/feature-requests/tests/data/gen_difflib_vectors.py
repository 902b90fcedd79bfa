"""Regenerates difflib_vectors.json: Python's own SequenceMatcher ratios (isjunk=None, autojunk on).

Run with any CPython 3: `python3 gen_difflib_vectors.py > difflib_vectors.json`.
The cases mix short titles, long strings (>= 200 characters, where autojunk makes frequent
characters "popular") and non-ASCII text, from a fixed seed.
"""
import json
import random
from difflib import SequenceMatcher

rng = random.Random(5)
cases = []
alphabets = ["ab ", "abcde ", "abcdefghijklmnopqrstuvwxyz0123456789 ", "aé日 x"]
for n in range(400):
    alpha = alphabets[n % len(alphabets)]
    la = rng.choice([0, 1, 3, 10, 40, 120, 199, 200, 201, 250, 400, 900])
    lb = rng.choice([0, 1, 3, 10, 40, 120, 199, 200, 201, 250, 400, 900])
    a = "".join(rng.choice(alpha) for _ in range(la))
    if rng.random() < 0.5 and la:
        # b derived from a by edits, so there are long blocks to find
        b = list(a)
        for _ in range(rng.randint(0, 20)):
            op = rng.random()
            pos = rng.randint(0, max(len(b) - 1, 0))
            if op < 0.4 and b:
                del b[pos]
            elif op < 0.8:
                b.insert(pos, rng.choice(alpha))
            elif b:
                b[pos] = rng.choice(alpha)
        b = "".join(b)
    else:
        b = "".join(rng.choice(alpha) for _ in range(lb))
    cases.append({"a": a, "b": b, "ratio": SequenceMatcher(None, a, b).ratio()})
json.dump(cases, __import__("sys").stdout, ensure_ascii=False, indent=0)
