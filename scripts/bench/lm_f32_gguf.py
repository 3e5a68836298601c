"""Writes a copy of a GGUF file with every tensor dequantised to F32 (the gguf package's
dequantize), all metadata kept but general.file_type, which becomes ALL_F32: the weights graftrl
computes with, for llama.cpp to run without quantised matrices (scripts/bench/lm.sh).

Usage: lm_f32_gguf.py SRC.gguf DST.gguf
"""

import os
import sys

import numpy as np
from gguf import GGUFReader, GGUFValueType, GGUFWriter, Keys, LlamaFileType
from gguf.quants import dequantize


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: lm_f32_gguf.py SRC.gguf DST.gguf")
    src, dst = sys.argv[1:]
    reader = GGUFReader(src)
    arch = bytes(reader.fields[Keys.General.ARCHITECTURE].parts[-1]).decode()
    tmp = dst + ".tmp"
    writer = GGUFWriter(tmp, arch)
    for field in reader.fields.values():
        # The writer adds the architecture and the GGUF.* header fields itself.
        if field.name == Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        val_type = field.types[0]
        sub_type = field.types[-1] if val_type == GGUFValueType.ARRAY else None
        value = int(LlamaFileType.ALL_F32) if field.name == Keys.General.FILE_TYPE else field.contents()
        writer.add_key_value(field.name, value, val_type, sub_type=sub_type)
    for t in reader.tensors:
        # dequantize gives numpy's shape, the GGUF dims reversed; add_tensor reverses it back.
        writer.add_tensor(t.name, np.ascontiguousarray(dequantize(t.data, t.tensor_type), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(tmp, dst)
    print(f"wrote {dst}: {len(reader.tensors)} tensors in F32, {os.path.getsize(dst) / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
