"""Reference values of tokens/bpe: SmolLM2-135M-Instruct's tokenizer as transformers builds it from
the GGUF file (its own conversion, transformers.integrations.gguf's convert_gguf_tokenizer), the
ids it gives for a fixed set of strings, its decoding of id sequences that cut UTF-8 sequences, and the ChatML renderings of its chat template
(apply_chat_template), written as JSON so that `go test ./tokens/bpe -run TestSmolLM2` compares
them without Python (tokens/bpe/smollm2_test.go).

Usage (from the repository root; the model from scripts/install-smollm2.sh):

    source scripts/venv.sh; py=$(venv tokenizer scripts/interop/requirements-tokenizer.txt)
    "$py" scripts/interop/tokenizer_reference.py            # rewrites tokens/bpe/testdata/smollm2_tokenizer.json
    "$py" scripts/interop/tokenizer_reference.py --check    # exits 1 when the committed file differs

transformers' AutoTokenizer.from_pretrained(dir, gguf_file=...) reads the file's metadata with a
reader that imports torch for its tensor types; the metadata is read here with the gguf package
instead and handed, under transformers' key names (GGUF_TOKENIZER_MAPPING), to the same
convert_gguf_tokenizer, so no torch is needed.

The file's pre-tokenizer name, "smollm", is not one transformers (5.23) maps to a split of its
own: its GGUF tokenizer keeps GPT-2's ByteLevel regex alone. SmolLM2's own tokenizer.json splits
digits first (Sequence[Digits(individual_digits=True), ByteLevel(add_prefix_space=False)]), and so
does llama.cpp for "smollm" (the regex \p{N}, then GPT-2's). The two differ where whitespace runs
into a digit: "  12" is [216, 216, 33, 34] (" ", " 12") from the GGUF conversion and [256, 33, 34]
("  ", "1", "2") from SmolLM2's tokenizer.json. The reference ids ("ids") are those of SmolLM2's
tokenizer.json pre-tokenizer set on transformers' conversion of the file (the same vocabulary,
merges and special tokens); where transformers' GGUF tokenizer as it stands gives other ids, the
case also carries them ("transformers_gguf_ids"), so the difference stays visible.
"""

import hashlib
import json
import random
import subprocess
import sys
from importlib.metadata import version

from gguf import GGUFReader
from tokenizers import pre_tokenizers
from transformers import PreTrainedTokenizerFast
from transformers.integrations.gguf.gguf_tokenizer_mapping import GGUF_TOKENIZER_MAPPING, convert_gguf_tokenizer

OUT = "tokens/bpe/testdata/smollm2_tokenizer.json"

HAND = [
    "", " ", "  ", "\t", "\n", "\n\n", " \n", "\r\n", "a", " a", "a ", "a  ", "  a", "a\tb", "a \tb",
    "Hello world", "Hello, world!", "Hello  world", "Hello   world  ", "hello\nworld\n", "trailing spaces   ",
    "tabs\t\tand\tnewlines\n\n\nend", "    indented code", "line one\n    line two\n\tline three",
    "I'm sure it's fine, you're right, they've gone, we'll see, he'd know", "DON'T SHOUT'S", "'s 't 're 've 'm 'll 'd",
    "rock 'n' roll", "O'Neil's", "''", "'", "it’s curly",
    "0", "7", "12", "123", "1234", "2024-12-06", "3.14159", "-42", "+1 (555) 010-9999", "1,000,000", "0x1F", "1e-5", "v1.2.3",
    " 1", "  12", "a1b2c3", "x=10;y=20", "٣٤٥", "¼ ½", "①②", "Ⅻ",
    "日本語のテキスト", "中文分词测试", "한국어 문장", "Привет, мир!", "Γειά σου Κόσμε", "مرحبا بالعالم", "שלום עולם",
    "हिन्दी", "ไทย", "naïve café résumé", "Straße", "Ǆ ǅ ǆ", "e\u0301", "\u200b zero width", "\ufeffbom",
    "😀", "👍🏽", "👨‍👩‍👧‍👦 family", "🇫🇷🇯🇵", "I ❤️ Go", "emoji😀inside", "∑∫√∞", "→ ← ↑ ↓", "© ® ™", "€100 £5 ¥3",
    "func main() {\n\tfmt.Println(\"hi\")\n}\n", "def f(x):\n    return x**2  # square\n", "for (int i = 0; i < n; i++) {}",
    "if a != b && c >= d || !e {", "<div class=\"x\">text</div>", "SELECT * FROM t WHERE id = 1;", "{\"key\": [1, 2, 3]}",
    "a_b_c snake_case CamelCase kebab-case", "https://example.com/path?q=1&r=2#frag", "user@example.com", "C:\\Users\\x",
    "$HOME/.cache", "#!/bin/bash", "... ?! ;; ::", "---", "===", "***bold***", "~~~", "```go\nx := 1\n```",
    "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|im_start|>user\nHi<|im_end|>\n",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "text<|im_end|>more", " <|im_start|> ", "<|im_start|><|im_end|>", "<|im_start", "im_start|>", "<|im_sta rt|>",
    "<repo_name>", "<file_sep>", "<filename>", "<gh_stars>", "<issue_start>", "<jupyter_code>", "<empty_output>",
    "<|endoftext|>tail", "head<|endoftext|>", "<|im_end|>\n<|im_end|>",
    "move north", "go to the door and open it", "The quick brown fox jumps over the lazy dog.",
    "   leading", "\t\tleading tabs", "\n\nleading newlines", "mixed \t \n whitespace", "end with newline\n",
    "a\u00a0b", "a\u3000b", "a\u2003b", "\u00a0", "\x00", "\x01\x02", "\x7f", "a\x0bb\x0cc",
    "Ünïcödé", "ÀÉÎÕÜ", "ﬁ ligature", "ＡＢＣ fullwidth", "ｶﾀｶﾅ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𝟘𝟙𝟚", "𐍈", "\U0010ffff",
]

PIECES = [
    "the", "The", " cat", "sat", "on", " mat", "token", "izer", "BPE", "GPT", "smol", "LM", "2", "135", "M",
    "Instruct", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "don't", " ", "  ", "   ", "\t", "\n", "\n\n",
    " \n", "\t\n", "\r", "0", "1", "42", "2026", "3.5", "-", "+", "=", "==", "!=", "(", ")", "[", "]", "{", "}",
    ",", ".", "...", "!", "?", ":", ";", "\"", "'", "`", "/", "\\", "_", "#", "@", "%", "&", "*", "<", ">", "|",
    "<|im_start|>", "<|im_end|>", "<|endoftext|>", "user", "assistant", "system", "日本", "语", "한", "ü", "é",
    "ß", "Ω", "ж", "😀", "🚀", "🏽", "\u200d", "❤", "\ufe0f", "ℕ", "½", "٣", "🇫", "🇷", "a", "b", "xyz", "Hello",
    "world", "func", "return", "if", "else", "for", "x", "y", "i", "++", "->", "=>", ":=", "//", "/*", "*/",
]


def strings():
    out = list(dict.fromkeys(HAND))
    rng = random.Random(20261206)
    seen = set(out)
    while len(out) < 1200:
        s = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12)))
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


CHATS = [
    ([{"role": "user", "content": "Hi"}], True),
    ([{"role": "user", "content": "Hi"}], False),
    ([{"role": "system", "content": "You are a maze solver."}, {"role": "user", "content": "Where is the exit?"}], True),
    (
        [
            {"role": "system", "content": "Answer in one word."},
            {"role": "user", "content": "Capital of France?"},
            {"role": "assistant", "content": "Paris"},
            {"role": "user", "content": "And of Japan?"},
        ],
        True,
    ),
    ([{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}], False),
]


def metadata(path):
    """The file's tokenizer metadata under transformers' names, as its get_gguf_tokenizer builds them."""
    reader = GGUFReader(path)
    fields = {}
    for name, f in reader.fields.items():
        if not name.startswith("tokenizer.") and name != "general.architecture":
            continue
        v = f.contents()
        fields[name] = v
    tok = {n: fields[f"tokenizer.{k}"] for k, n in GGUF_TOKENIZER_MAPPING["tokenizer"].items() if f"tokenizer.{k}" in fields}
    cfg = {n: fields[f"tokenizer.{k}"] for k, n in GGUF_TOKENIZER_MAPPING["tokenizer_config"].items() if f"tokenizer.{k}" in fields}
    return fields["general.architecture"], tok, cfg


def main():
    path = subprocess.run(["scripts/install-smollm2.sh", "--path"], check=True, capture_output=True, text=True).stdout.strip()
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    arch, tok, cfg = metadata(path)
    backend, _ = convert_gguf_tokenizer(arch, tok)
    special = {name: tok["tokens"][tok[f"{name}_id"]] for name in ("bos_token", "eos_token", "unk_token", "pad_token") if f"{name}_id" in tok}
    t = PreTrainedTokenizerFast(tokenizer_object=backend, chat_template=cfg["chat_template"], **special)

    # SmolLM2's own tokenizer.json's pre-tokenizer, on a second copy of the same vocabulary.
    hf_backend, _ = convert_gguf_tokenizer(arch, tok)
    hf_backend.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    )

    cases, differ = [], 0
    for s in strings():
        ids = t.encode(s, add_special_tokens=False)
        hf_ids = hf_backend.encode(s, add_special_tokens=False).ids
        case = {"text": s, "ids": hf_ids, "decoded": t.decode(hf_ids)}
        if ids != hf_ids:
            case["transformers_gguf_ids"] = ids
            differ += 1
        cases.append(case)
    # Decoding arbitrary id sequences: runs of byte tokens that cut UTF-8 sequences, replaced as
    # Hugging Face's ByteLevel decoder does (from_utf8_lossy), special tokens among them.
    rng = random.Random(49152)
    byte_ids = [tok["tokens"].index(c) for c in "".join(chr(x) for x in range(0x100, 0x144)) + "".join(chr(x) for x in range(0xA1, 0xFF)) if c in tok["tokens"]]
    decodes = []
    for n in range(300):
        pool = byte_ids if n < 200 else range(len(tok["tokens"]))
        ids = [rng.choice(pool) for _ in range(rng.randint(1, 8))]
        if n % 10 == 0:
            ids.insert(rng.randint(0, len(ids)), rng.randint(0, 16))
        decodes.append({"ids": ids, "decoded": t.decode(ids)})
    chats = []
    for messages, gen in CHATS:
        text = t.apply_chat_template(messages, tokenize=False, add_generation_prompt=gen)
        chats.append({"messages": messages, "add_generation_prompt": gen, "text": text, "ids": hf_backend.encode(text, add_special_tokens=False).ids})
    head = {
        "generator": f"scripts/interop/tokenizer_reference.py: transformers {version('transformers')}, tokenizers {version('tokenizers')}, gguf {version('gguf')}, jinja2 {version('jinja2')}",
        "file_sha256": sha,
        "chat_template": cfg["chat_template"],
    }
    # One case a line, so that a change shows as the cases it touches.
    lines = [json.dumps(c, ensure_ascii=True) for c in cases]
    chat_lines = [json.dumps(c, ensure_ascii=True) for c in chats]
    decode_lines = [json.dumps(d, ensure_ascii=True) for d in decodes]
    text = (
        json.dumps(head)[:-1]
        + ', "cases": [\n' + ",\n".join(lines)
        + '\n], "decodes": [\n' + ",\n".join(decode_lines)
        + '\n], "chats": [\n' + ",\n".join(chat_lines) + "\n]}\n"
    )
    if "--check" in sys.argv[1:]:
        with open(OUT) as f:
            if f.read() != text:
                print(f"FAIL: {OUT} differs from the values transformers computes now")
                sys.exit(1)
        print(f"PASS: {OUT} is up to date ({len(cases)} strings, {differ} of them tokenized otherwise by transformers' GGUF conversion, {len(decodes)} decodes, {len(chats)} chats)")
        return
    with open(OUT, "w") as f:
        f.write(text)
    print(f"wrote {OUT}: {len(cases)} strings ({differ} tokenized otherwise by transformers' GGUF conversion), {len(decodes)} decodes, {len(chats)} chats")


if __name__ == "__main__":
    main()
