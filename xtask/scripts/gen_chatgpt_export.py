#!/usr/bin/env python3
"""Writes a synthetic ChatGPT export (conversations.json, the documented layout: conversation
trees with current_node) for measuring `elroy import chatgpt` (docs/performance.md) and the
granularity of imported memories (docs/import.md#granularity).

    gen_chatgpt_export.py OUT_DIR --conversations N --exchanges M [--seed S] [--reply-sentences K]

Writes OUT_DIR/conversations.json and OUT_DIR/questions.json: facts said once each in the
middle of a conversation (one fact per conversation, in the first len(FACTS) conversations),
with a question that asks for it in other words and the word that shows it was found. Every
conversation also has an abandoned branch (an edit the person left). Deterministic per seed.
"""

import argparse
import json
import os
import random

FACTS = [
    ("My sister Beatrice keeps three beehives on the roof of her flat in Lisbon.",
     "Where does my sister keep her bees?", "Beatrice"),
    ("Our landlord, Mr Okonkwo, raised the rent to 1450 euros starting in April.",
     "How much is the rent going up to?", "1450"),
    ("I am allergic to penicillin; I found out when I was nine.",
     "Which antibiotic am I allergic to?", "penicillin"),
    ("My daughter's violin teacher is called Ingrid Solberg.",
     "Who teaches my daughter music?", "Solberg"),
    ("The spare key is hidden under the blue flowerpot by the shed.",
     "Where did I hide the spare key?", "flowerpot"),
    ("I ran the Valencia marathon in 3 hours 41 minutes.",
     "What was my marathon time?", "41"),
    ("My passport number ends in 7731 and expires in 2029.",
     "When does my passport expire?", "7731"),
    ("Grandma's apple cake recipe uses cardamom instead of cinnamon.",
     "What spice goes in grandma's apple cake?", "cardamom"),
    ("Our wifi at the cabin is called Fjordnet and the router is in the attic.",
     "Where is the router at the cabin?", "Fjordnet"),
    ("My manager Priyanka wants the quarterly report by the 14th.",
     "When is the quarterly report due?", "Priyanka"),
    ("I parked the camper van at the Lindenhof garage, level minus two.",
     "Where did I leave the camper?", "Lindenhof"),
    ("The dog's vet is Dr. Haverkamp on Mill Street.",
     "Who is the dog's veterinarian?", "Haverkamp"),
    ("My blood type is O negative.",
     "What is my blood group?", "negative"),
    ("I planted garlic in the north bed on the first of November.",
     "When did I plant the garlic?", "garlic"),
    ("Tomasz lent me his drill and I promised to return it by Sunday.",
     "Whose drill do I have to give back?", "Tomasz"),
    ("The boiler service code for our heating is E-227.",
     "What is the heating's service code?", "E-227"),
    ("My favourite bakery is Pão Dourado near the station.",
     "Which bakery do I like best?", "Dourado"),
    ("I switched my phone plan to Lumen Mobile for 12 euros a month.",
     "Which mobile provider am I with now?", "Lumen"),
    ("Our wedding anniversary is on the 9th of September.",
     "When is our anniversary?", "September"),
    ("The book club is reading Middlemarch this month.",
     "What is the book club reading?", "Middlemarch"),
]

WORDS = ("plan week garden code trip budget keep sister home work roof rent key report call "
         "train book cake phone garage heating bread dog car email meeting school music list "
         "store morning evening weekend project idea question answer problem change step note "
         "friend family kitchen window paint table chair light water coffee tea walk run bike "
         "city street station market price month year day time place team game film song").split()


REPLY_SENTENCES = 8


def sentence(rng, n):
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def paragraph(rng, sentences):
    return " ".join(sentence(rng, rng.randint(6, 14)) for _ in range(sentences))


def node(nid, parent, role, text, t):
    # The metadata real exports carry on every message (model, request ids, finish details), so
    # bytes per word are as in a real conversations.json.
    metadata = {"is_visually_hidden_from_conversation": False}
    if role == "assistant":
        metadata.update({"finish_details": {"type": "stop", "stop_tokens": [200002]},
                         "is_complete": True, "citations": [], "content_references": [],
                         "message_type": None, "model_slug": "gpt-4o", "default_model_slug": "auto",
                         "parent_id": parent, "request_id": f"{nid}-8f1c2e7a9b3d4f60-AMS",
                         "timestamp_": "absolute"})
    else:
        metadata.update({"selected_github_repos": [], "serialization_metadata": {"custom_symbol_offsets": []},
                         "request_id": f"{nid}-8f1c2e7a9b3d4f60-AMS", "message_source": None,
                         "timestamp_": "absolute", "message_type": None})
    return {"id": nid, "parent": parent, "children": [],
            "message": {"id": nid, "author": {"role": role, "name": None, "metadata": {}},
                        "create_time": t, "update_time": None, "recipient": "all",
                        "status": "finished_successfully", "end_turn": role == "assistant",
                        "weight": 1.0, "channel": None,
                        "content": {"content_type": "text", "parts": [text]},
                        "metadata": metadata}}


def conversation(rng, index, exchanges, start):
    mapping = {"root": {"id": "root", "parent": None, "children": [], "message": None}}
    parent = "root"
    fact = FACTS[index] if index < len(FACTS) else None
    for i in range(exchanges):
        t = start + i * 90.0
        u, a = f"c{index}u{i}", f"c{index}a{i}"
        text = paragraph(rng, rng.randint(1, 3))
        if fact and i == exchanges // 2:
            text = "By the way: " + fact[0]
        if i == 1:
            mapping[f"c{index}old"] = node(f"c{index}old", parent, "user",
                                           "Abandoned edit: " + paragraph(rng, 1), t)
        mapping[u] = node(u, parent, "user", text, t)
        mapping[a] = node(a, u, "assistant", paragraph(rng, rng.randint(3, REPLY_SENTENCES)), t + 30)
        parent = a
    return {"title": sentence(rng, 4)[:-1], "create_time": start, "update_time": start + exchanges * 90,
            "conversation_id": f"conv-{index}", "id": f"conv-{index}", "current_node": parent,
            "mapping": mapping}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--conversations", type=int, default=200)
    p.add_argument("--exchanges", type=int, default=30)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--reply-sentences", type=int, default=8,
                   help="the most sentences of an assistant reply (at least 3)")
    args = p.parse_args()
    global REPLY_SENTENCES
    REPLY_SENTENCES = max(3, args.reply_sentences)
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    start = 1_640_995_200.0  # 2022-01-01
    with open(os.path.join(args.out, "conversations.json"), "w") as f:
        f.write("[")
        for i in range(args.conversations):
            if i:
                f.write(",")
            json.dump(conversation(rng, i, args.exchanges, start + i * 86_400.0 / 4), f)
        f.write("]")
    questions = [{"question": q, "expect": w} for (_, q, w) in FACTS[:args.conversations]]
    with open(os.path.join(args.out, "questions.json"), "w") as f:
        json.dump(questions, f, indent=1)


if __name__ == "__main__":
    main()
