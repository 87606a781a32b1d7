"""The deployment around a Flink configuration: docker-compose files, Kubernetes manifests, Helm charts
and Dockerfiles, read into one value (``model.Deployment``) of the processes that run Flink and where
their configuration comes from. Readers are registered in ``readers.READERS`` and load lazily."""
