"""The shared-space rotation variant of the single-hop block construction [derived]
(docs/geometric.md#setting): every relation's attribute code rotated by its own Haar-orthogonal
matrix in one d-dimensional space, instead of a block per relation
(:mod:`constructions.geometric.single_hop`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from constructions.geometric.codes import attribute_codes
from constructions.tasks import check_bijections, check_generator, require_size


@dataclass
class RotationModel:
    """Shared-space rotation variant of the block construction [derived].

    e_s = sum_r M_r u_{pi_r(s)} with Haar-orthogonal M_r (d x d) and unit u_a in R^d. The selector
    computes M_r^T x for the active relation with one +-ReLU pair per (relation, coordinate)
    (width 2*R*d, gates closed by -beta); the output is u_{pi_r(s)} plus crosstalk
    sum_{r' != r} M_r^T M_{r'} u_{pi_{r'}(s)} of per-coordinate variance about (R-1)/d.
    """

    perms: np.ndarray
    codes: np.ndarray
    rotations: np.ndarray
    beta: float

    @property
    def subject_embeddings(self) -> np.ndarray:
        return sum(self.codes[self.perms[r]] @ self.rotations[r].T for r in range(len(self.perms)))

    def selector_output(self, subj, rel) -> np.ndarray:
        x = self.subject_embeddings[np.asarray(subj)]
        n_rel, d = self.rotations.shape[0], self.rotations.shape[1]
        pre = np.einsum("rdk,bd->brk", self.rotations, x)  # M_r^T x for every r: (B, R, d)
        if np.max(np.abs(pre)) >= self.beta:
            raise ValueError(
                f"gate bias beta={self.beta} must exceed max |M_r^T x| = "
                f"{np.max(np.abs(pre)):.3g} (exactness of the gates)"
            )
        closed = np.where(np.arange(n_rel)[None, :] == np.asarray(rel)[:, None], 0.0, -self.beta)
        plus = np.maximum(pre + closed[:, :, None], 0.0)
        minus = np.maximum(-pre + closed[:, :, None], 0.0)
        del d
        return (plus - minus).sum(axis=1)

    def selector_width(self) -> int:
        return 2 * self.rotations.shape[0] * self.rotations.shape[1]


def build_rotation_model(
    perms, dim: int, rng: np.random.Generator, gate_bias: float | None = None
) -> RotationModel:
    from scipy.stats import ortho_group

    perms = check_bijections(perms)
    check_generator(rng)
    dim = require_size("dim", dim, 2, "d", "dim d")
    n_rel, n = perms.shape
    codes = attribute_codes(n, dim, "spherical", rng)
    rotations = np.stack([ortho_group.rvs(dim, random_state=rng) for _ in range(n_rel)])
    beta = float(gate_bias) if gate_bias is not None else 2.0 * n_rel + 1.0  # |M^T x| <= ||x|| <= R
    return RotationModel(perms=perms, codes=codes, rotations=rotations, beta=beta)
