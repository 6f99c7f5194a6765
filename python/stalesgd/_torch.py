"""A torch.nn.Module as a run's model: scripted with torch.jit.script into a temporary file
that --model torchscript:PATH trains (docs/models.md, "TorchScript models"; docs/python.md)."""

import os
import tempfile

from ._errors import Error


def script_module(module, data=None):
    """(path of the scripted module, its temporary folder to remove after the run)."""
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
    tmp = tempfile.mkdtemp(prefix="stalesgd-model-")
    path = os.path.join(tmp, "model.pt")
    scripted.save(path)
    return path, tmp
