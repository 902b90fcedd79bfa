"""A home of LoCoMo dialog turns written the way people write memories (docs/performance.md,
"Questions without loading the model").

python3 tests/data/write_locomo_home.py ELROY_BINARY LOCOMO_DIR MODEL_DIR HOME [CONVERSATION]

Writes every dialog turn of LoCoMo conversation CONVERSATION (43: 680 turns) from LOCOMO_DIR (the
unpacked locomo10_v2 folder) into the new elroy home HOME, each with its own `elroy tools call
create_memory` process and the built-in embedder over MODEL_DIR (all-MiniLM-L6-v2), so the
detached worker those writes start computes the vectors. Prints the number of memories written.
Standard library only; the caller's ELROY_* variables are not passed on.
"""

import json
import os
import subprocess
import sys


def main() -> None:
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    binary, locomo, model, home = sys.argv[1:5]
    conversation = sys.argv[5] if len(sys.argv) == 6 else "43"
    with open(os.path.join(locomo, f"{conversation}.json"), encoding="utf-8") as f:
        doc = json.load(f)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELROY_")}
    env.update(
        ELROY_HOME=home,
        TZ="UTC0",
        ELROY_EMBEDDING_MODEL="builtin",
        ELROY_EMBEDDING_MODEL_PATH=model,
    )
    os.makedirs(home, exist_ok=True)
    sessions = sorted(
        (k for k in doc if k.startswith("session_") and k.split("_")[1].isdigit() and k.count("_") == 1),
        key=lambda k: int(k.split("_")[1]),
    )
    written = 0
    for session in sessions:
        for turn in doc[session]:
            if not isinstance(turn, dict):
                continue
            written += 1
            args = json.dumps(
                {
                    "name": f"{turn['speaker']} {session} turn {written}",
                    "text": f"{turn['speaker']}: {turn['text']}",
                }
            )
            subprocess.run(
                [binary, "tools", "call", "create_memory", "--args", args],
                env=env,
                capture_output=True,
                check=True,
            )
    print(written)


if __name__ == "__main__":
    main()
