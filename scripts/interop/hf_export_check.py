"""The Hugging Face directory `graftrl convert` writes from SmolLM2's GGUF, as transformers reads it:
LlamaForCausalLM.from_pretrained must load it with no missing, unexpected or mismatched tensor
(the output layer tied to the embedding), AutoTokenizer must render the 5 reference chats of
policy/host/testdata/smollm2_logits.json to their ids, the last-position logits must lie within
1e-3 of that file's (an independent numpy forward pass of the GGUF: llama_reference.py) with the
same most likely token, and the greedy continuation must be the file's.

    python hf_export_check.py HF_DIR        # run by scripts/interop/run.sh with requirements-lm.txt

Prints PASS or FAIL with the figures; exits 1 on FAIL.
"""

import json
import sys

import numpy as np
import torch
from transformers import AutoTokenizer, LlamaForCausalLM

REF = "policy/host/testdata/smollm2_logits.json"
TOL = 1e-3


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: hf_export_check.py HF_DIR")
    ref = json.load(open(REF))
    model, info = LlamaForCausalLM.from_pretrained(sys.argv[1], dtype=torch.float32, output_loading_info=True)
    model.eval()
    tok = AutoTokenizer.from_pretrained(sys.argv[1])
    fails = [f"loading: {k} {v}" for k, v in info.items() if v]
    if model.lm_head.weight.data_ptr() != model.model.embed_tokens.weight.data_ptr():
        fails.append("the output layer is not tied to the token embedding")
    worst = 0.0
    for i, p in enumerate(ref["prompts"]):
        ids = tok.apply_chat_template(p["messages"], add_generation_prompt=True, tokenize=True)
        if not isinstance(ids, list):
            ids = ids["input_ids"]
        if list(ids) != p["ids"]:
            fails.append(f"prompt {i}: AutoTokenizer's ids differ from the reference's")
        with torch.no_grad():
            logits = model(torch.tensor([p["ids"]])).logits[0, -1].numpy()
        d = max(np.abs(logits[p["top_ids"]] - np.array(p["top_logits"])).max(),
                np.abs(logits[::ref["stride"]] - np.array(p["strided_logits"])).max())
        worst = max(worst, float(d))
        if int(logits.argmax()) != p["top_ids"][0]:
            fails.append(f"prompt {i}: most likely token {int(logits.argmax())}, the reference's {p['top_ids'][0]}")
    if worst > TOL:
        fails.append(f"max |Δlogit| {worst:.3g} over {TOL}")
    g = ref["greedy_prompt"]
    with torch.no_grad():
        out = model.generate(torch.tensor([ref["prompts"][g]["ids"]]), max_new_tokens=len(ref["greedy"]),
                             do_sample=False)
    got = out[0, len(ref["prompts"][g]["ids"]):].tolist()
    if got != ref["greedy"]:
        fails.append(f"greedy continuation {got} differs from the reference's {ref['greedy']}")
    figures = (f"{len(ref['prompts'])} chats, max |Δlogit| {worst:.3g} against the numpy reference, "
               f"greedy {len(ref['greedy'])} tokens {'identical' if got == ref['greedy'] else 'different'}")
    if fails:
        print("FAIL hf export:", figures)
        for f in fails:
            print("  ", f)
        sys.exit(1)
    print("PASS hf export (transformers loads graftrl convert's directory):", figures)


if __name__ == "__main__":
    main()
