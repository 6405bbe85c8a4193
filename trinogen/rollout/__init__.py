"""Fleet-wide changes in waves, gated on Argo CD's health (issue 20, section 3).

A *fleet change* is a change of a cluster's files while its own document did not change (the
settings, defaults, profiles, templates, chart version, a shared catalog, trinogen itself). With
`rollout` waves in the settings it reaches the first wave at once; each later wave only when
every cluster released so far is Synced and Healthy at the repository's head for the soak time.
The modules, pure first:

    waves   which wave each cluster is in (`rollout.waves`)
    state   the rollout's record, kept in the GitOps repository beside the files it gates
    gate    advance, wait or halt, from Argo CD's view, the clock and the record
    step    one run's step: hold the later waves' clusters, release the rest, update the record

Imported only when the settings have a `rollout` section: a sync without waves pays nothing.
"""
