"""A torch.nn.Module as a run's model: scripted with torch.jit.script and saved as the file that
--model torchscript:PATH trains (docs/models.md, "TorchScript models"; docs/python.md)."""

import hashlib
import io
import re
import zipfile

from ._errors import Error

# A class constant in a scripted module's code: `  in_features : Final[int] = 8`.
_CONSTANT = re.compile(rb"^\s+\w+ : Final\[.*\] = ")


def script_module(module):
    """(the scripted module's bytes, torch.jit.save's file; the hex digest of what they hold)."""
    try:
        import torch
    except ImportError:
        raise Error(f"model: a {type(module).__name__} is no model spec, and without PyTorch "
                    "(python3-torch) it cannot be a module; give a spec such as 'mlp'")
    if isinstance(module, torch.jit.ScriptModule):
        scripted = module
    elif isinstance(module, torch.nn.Module):
        try:
            scripted = torch.jit.script(module)
        except Exception as e:  # TorchScript's compiler raises many kinds; all mean the same
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise Error(f"model: {type(module).__name__} does not script with torch.jit.script "
                        f"({first}); make its forward TorchScript-compatible, or pass "
                        "torch.jit.trace(module, example) yourself") from None
    else:
        raise Error(f"model: a {type(module).__name__} is no model; give a spec such as 'mlp' "
                    "or a torch.nn.Module")
    buffer = io.BytesIO()  # not a file: the archive would be named after it
    torch.jit.save(scripted, buffer)
    data = buffer.getvalue()
    return data, digest(data)


def digest(data):
    """SHA-256 of a saved module's entries, name and bytes, in name order, each code file with
    its classes' constants sorted: TorchScript writes them in the order of a Python set, which
    differs from process to process, so that the same module saved by two processes has one
    digest, and modules of one digest compute the same."""
    h = hashlib.sha256()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for name in sorted(archive.namelist()):
            content = archive.read(name)
            if name.endswith(".py"):
                content = _constants_sorted(content)
            h.update(b"%d:%s%d:" % (len(name), name.encode(), len(content)) + content)
    return h.hexdigest()


def _constants_sorted(code):
    lines = code.split(b"\n")
    out, run = [], []
    for line in lines + [b""]:
        if _CONSTANT.match(line):
            run.append(line)
            continue
        out.extend(sorted(run))
        run = []
        out.append(line)
    return b"\n".join(out[:-1])
