"""Fast paths: the same numbers as the plain torchdiffeq/torchcde solve, computed with fewer and
larger operations (docs/performance.md).

``grid`` rebuilds torchdiffeq's fixed grid, stage times and output interpolation; ``tableau``
holds the Butcher tableaux of torchdiffeq's ``euler``, ``midpoint`` and ``rk4`` (3/8 rule) and
the lean stepping loop; ``adaptive`` takes torchdiffeq's ``dopri5`` steps, accepted and rejected,
on a body's stage split; ``choice`` decides at build time whether a body runs fast or generic.
The family-specific paths are ``fwp_*``, ``ncde``, ``gru_ode``, ``jacobian`` and ``ltc``;
``compiled`` builds and loads the C++ kernels in ``kernels/`` that some of them call on CPU.
"""
