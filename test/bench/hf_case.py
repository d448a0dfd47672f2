"""Hugging Face models for train_speed.py: LlamaForCausalLM at the CPU
speed issue's shape (vocabulary 96, hidden 64, MLP 176, 2 layers, 4 heads
sharing 2 key/value heads, sequence 32), seeded weights, its own causal-LM
loss, as a model.onnx that `dtc compile` and ONNX Runtime Training take and
as the same module for PyTorch. Runs under the peers' virtual environment
(transformers is not a Debian package; setup_peers.sh installs it).

  venv/bin/python hf_case.py NAME OUT --batch B --samples N

writes OUT/model.onnx (opset 17, training mode, inputs `input_ids` and
`labels` [B, 32] int64 with a dynamic batch axis, outputs `logits` and
`loss`), OUT/train/input_ids.npy and OUT/train/labels.npy (N samples).
`build(name)` and `load_weights(module, onnx_model)` give the module with
the export's weights (its initializers, by the module's parameter names).
"""

import argparse
import sys

import torch

from case_common import load_weights, save_and_export  # noqa: F401

SEQUENCE = 32
VOCABULARY = 96


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(
        vocab_size=VOCABULARY, hidden_size=64, intermediate_size=176,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=2 * SEQUENCE, attn_implementation="eager",
        use_cache=False)
    return LlamaForCausalLM(config)


MODELS = {"llama": _llama}


class WithLoss(torch.nn.Module):
    """The causal LM and its own loss (labels shifted inside): forward
    returns (logits, loss), as the examples' models do."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, input_ids, labels):
        out = self.net(input_ids=input_ids, labels=labels, use_cache=False)
        return out.logits, out.loss


def build(name):
    """The model with seeded weights, in training mode (its attention
    dropout is 0 by default)."""
    torch.manual_seed(0)
    model = WithLoss(MODELS[name]())
    model.train()
    return model


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", choices=sorted(MODELS))
    parser.add_argument("out")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--samples", type=int, default=64)
    args = parser.parse_args(argv)
    model = build(args.name)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCABULARY, (args.samples, SEQUENCE), generator=g)
    labels = torch.randint(0, VOCABULARY, (args.samples, SEQUENCE),
                           generator=g)
    save_and_export(model, args.out, args.batch,
                    {"input_ids": ids, "labels": labels})


if __name__ == "__main__":
    main(sys.argv[1:])
