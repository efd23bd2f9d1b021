"""The attentional encoder–decoder of Bahdanau, Cho & Bengio (2015).

Glossary (names used in code, as in the paper):

    annotations  h_j = [→h_j ; ←h_j]     encoder output for source position j  (B, S, 2H)
    keys         U_a h_j                  the part of the alignment model that depends
                                          on h_j only, computed once per batch   (B, S, n)
    state        s_i                      decoder RNN state after target position i (B, D)
    energies     e_ij = a(s_{i-1}, h_j)   alignment scores                       (B, S)
    weights      α_ij = softmax_j(e_ij)   the alignment; padding gets exactly 0  (B, S)
    context      c_i = Σ_j α_ij h_j       a distinct context per target position (B, 2H)
    readout      t_i = g(y_{i-1}, s_i, c_i)  deep output before the vocabulary projection

This package imports no text, configuration, search, training or application module:
an import contract in pyproject.toml, checked by `make test`, keeps it so.
"""
