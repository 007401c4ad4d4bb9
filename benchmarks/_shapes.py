"""The suites' shapes, named field by field where they are declared. Each helper returns
the plain tuple the op takes (``src/tensorops``, each op module's docstring): asv keys
the history on the params' text form, which a named tuple would change."""

from __future__ import annotations


def activations(*, batch: int, tokens: int, features: int) -> tuple[int, ...]:
    return (batch, tokens, features)


def projection(*, batch: int, tokens: int, in_features: int, out_features: int) -> tuple:
    return (batch, tokens, in_features, out_features)


def product(*, m: int, k: int, n: int) -> tuple[int, ...]:
    """(m, k) @ (k, n)."""
    return (m, k, n)


def batched_product(*, batch: int, m: int, k: int, n: int) -> tuple[int, ...]:
    return (batch, m, k, n)


def attention(*, batch: int, heads: int, tokens: int, head_dim: int) -> tuple[int, ...]:
    return (batch, heads, tokens, head_dim)


def conv(
    *, batch: int, in_channels: int, height: int, width: int, out_channels: int, kernel: int
) -> tuple[int, ...]:
    """A square ``kernel``, stride 1, no padding."""
    return (batch, in_channels, height, width, out_channels, kernel)


# A transformer's activations: batch 32, 512 tokens, width 768 (BERT-base, GPT-2 small).
NLP = activations(batch=32, tokens=512, features=768)
NLP_PROJECTION = projection(batch=32, tokens=512, in_features=768, out_features=768)
# A 768-wide model's attention: 12 heads of 64.
ATTENTION = attention(batch=8, heads=12, tokens=512, head_dim=64)
# The first convolution of an ImageNet CNN: RGB 224x224 to 64 channels, 3x3.
CONV_B1 = conv(batch=1, in_channels=3, height=224, width=224, out_channels=64, kernel=3)
CONV_B32 = conv(batch=32, in_channels=3, height=224, width=224, out_channels=64, kernel=3)


def embedding(*, batch: int, tokens: int, vocabulary: int, features: int) -> tuple[int, ...]:
    return (batch, tokens, vocabulary, features)


# GPT-2 small's token embedding: a 50257 x 768 table looked up at 32 x 512 tokens.
GPT2_EMBEDDING = embedding(batch=32, tokens=512, vocabulary=50257, features=768)
