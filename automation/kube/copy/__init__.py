"""Copy namespaced resources from the primary cluster to its mirror (seed 000, step 2).

The cni-swap moves traffic to a mirror cluster while the primary loses its network, so
the mirror must run the same workloads. This package copies the chosen namespaces'
objects the way Velero restores them — server-populated fields stripped, objects made
by a controller left to that controller — with two differences that matter here:

* the image registry is rewritten by an **anchored** prefix (``registry.example.com``
  becomes ``registry-mirror.example.com`` only at the start of an image reference and
  on a path boundary; ``myregistry.example.com/...`` is never touched, unlike Velero's
  substring replace);
* each copy carries, in ``kubeshift.io/source-*`` annotations, a digest of what was
  copied and the source's ``resourceVersion``/``generation``. A re-run compares
  digests and writes only what changed (server-side apply, field manager
  ``kubeshift``), and :func:`~automation.kube.copy.drift.find_drift` compares the
  primary against those annotations so a deploy to the primary during the mirror
  window is caught.

``kinds`` lists what can be copied, ``options`` what a copy is asked to do (with the
anchored registry rewrite), ``transforms`` turns a primary object into its mirror
manifest (pure), ``api`` and ``namespaces`` talk to the clusters, ``plan`` says what a
copy would write, ``copying`` writes it and returns a ``report``, and ``drift`` finds
what changed on the primary since.

Secret values are never logged or reported: items carry kind, namespace and name only,
and API error bodies about Secrets are dropped.
"""
