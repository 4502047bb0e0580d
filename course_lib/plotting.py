"""One plotting module for the whole course: heatmaps for encodings, masks and attention."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np


def _as_matrix(values) -> np.ndarray:
    if hasattr(values, "numpy"):
        values = values.numpy()
    matrix = np.asarray(values, dtype=np.float64)
    matrix = np.squeeze(matrix)
    if matrix.ndim == 1:
        matrix = matrix[np.newaxis, :]
    if matrix.ndim != 2:
        raise ValueError(
            f"a heatmap needs a 2-D matrix (after dropping size-1 axes), got shape {matrix.shape}"
        )
    return matrix


def show_heatmap(
    values,
    *,
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    xticklabels: Sequence[str] | None = None,
    yticklabels: Sequence[str] | None = None,
    cmap: str = "viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    center: float | None = None,
    annotate: bool = False,
    value_format: str = ".2f",
    colorbar: bool = True,
    ax=None,
):
    """Draw one matrix as a heatmap (rows top to bottom) and return the axes.

    `center` makes the colour scale symmetric around that value (for diverging maps such as
    "coolwarm", so that the middle colour means `center`); `annotate` writes each value in its
    cell, formatted with `value_format`.
    """
    matrix = _as_matrix(values)
    if center is not None and vmin is None and vmax is None:
        reach = float(np.nanmax(np.abs(matrix - center))) or 1.0
        vmin, vmax = center - reach, center + reach
    if ax is None:
        height = min(8.0, 1.5 + 0.35 * matrix.shape[0]) if annotate or yticklabels else 4.0
        _, ax = plt.subplots(figsize=(max(4.0, min(10.0, 1.5 + 0.5 * matrix.shape[1])), height))
    image = ax.imshow(matrix, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if xticklabels is not None:
        labels = [str(label) for label in xticklabels]
        ax.set_xticks(range(len(labels)), labels=labels, rotation=90 if max(map(len, labels)) > 3 else 0)
    if yticklabels is not None:
        ax.set_yticks(range(len(yticklabels)), labels=list(yticklabels))
    if annotate:
        for (row, col), value in np.ndenumerate(matrix):
            red, green, blue, _ = image.cmap(image.norm(value))
            # Dark text on light cells and the reverse, whatever the colour map.
            light = 0.299 * red + 0.587 * green + 0.114 * blue > 0.5
            ax.text(col, row, format(value, value_format), ha="center", va="center", fontsize=8,
                    color="black" if light else "white")
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def show_heatmaps(
    matrices: Sequence,
    *,
    titles: Sequence[str] | None = None,
    ncols: int = 4,
    suptitle: str = "",
    panel_size: float = 3.0,
    **heatmap_kwargs,
):
    """Draw several matrices side by side on a shared colour scale; return the figure."""
    matrices = [_as_matrix(m) for m in matrices]
    if not matrices:
        raise ValueError("show_heatmaps needs at least one matrix")
    ncols = max(1, min(ncols, len(matrices)))
    nrows = -(-len(matrices) // ncols)
    heatmap_kwargs.setdefault("vmin", min(float(np.nanmin(m)) for m in matrices))
    heatmap_kwargs.setdefault("vmax", max(float(np.nanmax(m)) for m in matrices))
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_size * ncols + 1, panel_size * nrows),
                             squeeze=False, constrained_layout=True)
    for index, ax in enumerate(axes.flat):
        if index >= len(matrices):
            ax.axis("off")
            continue
        title = titles[index] if titles is not None else ""
        show_heatmap(matrices[index], title=title, ax=ax, colorbar=False, **heatmap_kwargs)
    mappable = axes.flat[0].images[0]
    fig.colorbar(mappable, ax=axes, fraction=0.03, pad=0.02)
    if suptitle:
        fig.suptitle(suptitle)
    return fig
