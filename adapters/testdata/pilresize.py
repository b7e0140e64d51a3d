"""Makes pilresize.json, Pillow's resizes that adapters' PIL filters are held to.

Run once, from the repository root, with Debian's Pillow (apt-get install
python3-pil, not pip, so that the references come from a known build):

    /usr/bin/python3 adapters/testdata/pilresize.py ../shared/models > adapters/testdata/pilresize.json

For every picture, mode (RGB, and L as Image.convert('L') makes it), filter
and size it records the SHA-256 of Image.resize's bytes (row by row, one byte
a channel); for cat.bmp at 7x5 it records the bytes themselves, so that a
failing test can say which pixel differs. The letterbox cases are pycoral's
common.set_resized_input: the picture scaled by min(W/w, H/h), resized with
the filter, in the top-left of a zero-filled W x H input.
"""

import hashlib
import json
import sys

import PIL
from PIL import Image

PICTURES = ["cat.bmp", "grace_hopper.bmp", "posenet_test_image.bmp"]
FILTERS = {
    "nearest": Image.NEAREST,
    "bilinear": Image.BILINEAR,
    "bicubic": Image.BICUBIC,
    "lanczos": Image.LANCZOS,
    "box": Image.BOX,
    "hamming": Image.HAMMING,
}
# (width, height): model inputs, odd and tiny sizes, upscales, and sizes
# that keep one side (one pass only).
SIZES = [(224, 224), (128, 128), (160, 160), (300, 300), (481, 353),
         (513, 513), (33, 17), (1, 1), (7, 5), (1023, 677), (97, 600)]
SAME_WIDTH_HEIGHTS = [100]  # with the picture's own width
L_SIZES = [(224, 224), (33, 17), (513, 513)]
LETTERBOX_INPUTS = [(300, 300), (224, 224), (128, 128), (481, 353), (320, 240)]


def digest(data):
    return hashlib.sha256(data).hexdigest()


def letterbox(img, filt, width, height):
    """pycoral's set_resized_input: the input's bytes and the scale."""
    w, h = img.size
    scale = min(width / w, height / h)
    w, h = int(w * scale), int(h * scale)
    small = img.resize((w, h), filt).tobytes()
    row = 3 * width
    out = bytearray(row * height)
    for y in range(h):
        out[y * row:y * row + 3 * w] = small[y * 3 * w:(y + 1) * 3 * w]
    return bytes(out), scale, w, h


def main(models):
    cases, boxes, full = [], [], []
    for name in PICTURES:
        rgb = Image.open(f"{models}/{name}").convert("RGB")
        gray = rgb.convert("L")
        sizes = SIZES + [(rgb.size[0], h) for h in SAME_WIDTH_HEIGHTS] + [rgb.size]
        for fname, filt in FILTERS.items():
            for mode, img, mode_sizes in (("RGB", rgb, sizes), ("L", gray, L_SIZES)):
                for w, h in mode_sizes:
                    data = img.resize((w, h), filt).tobytes()
                    cases.append({"picture": name, "mode": mode, "filter": fname,
                                  "width": w, "height": h, "sha256": digest(data)})
                    if name == "cat.bmp" and (w, h) == (7, 5):
                        full.append({"picture": name, "mode": mode, "filter": fname,
                                     "width": w, "height": h, "hex": data.hex()})
            for width, height in LETTERBOX_INPUTS:
                data, scale, w, h = letterbox(rgb, filt, width, height)
                boxes.append({"picture": name, "filter": fname, "input_width": width,
                              "input_height": height, "scale": scale, "width": w,
                              "height": h, "sha256": digest(data)})
    # One record a line, so that a diff of the file reads case by case.
    out = sys.stdout
    out.write('{"pillow": %s,\n' % json.dumps(PIL.__version__))
    for key, records in (("cases", cases), ("letterbox", boxes), ("full", full)):
        out.write('"%s": [\n' % key)
        out.write(",\n".join(json.dumps(r) for r in records))
        out.write("\n]%s\n" % ("," if key != "full" else ""))
    out.write("}\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/models")
