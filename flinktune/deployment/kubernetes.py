"""Read Kubernetes manifests: workloads (Deployment, StatefulSet, Job, Pod, ...) whose containers run
Flink, Services, ConfigMap names, PersistentVolumeClaims, and FlinkDeployments (the operator's
JobManager and TaskManager pods).

Kubernetes semantics used: a ConfigMap volume is mounted read-only (since Kubernetes 1.9.4); a
``persistentVolumeClaim`` is shared storage when its access mode is ReadWriteMany; ``emptyDir`` is private
to the pod; a StatefulSet's ``volumeClaimTemplates`` give each pod a claim of its own; a Service
selects pods by labels. For a FlinkDeployment the operator (flink-kubernetes-operator,
``FlinkConfigBuilder`` / ``StandaloneKubernetesConfigOptionsInternal``) runs the JobManager and
TaskManager from ``spec.image`` with memory limits of ``spec.{jobManager,taskManager}.resource.memory``,
the pod templates merged in, and the configuration rendered into a read-only ConfigMap.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from flinktune.config.types import FLINK_PROPERTIES, ConfigDocument
from flinktune.deployment.common import (
    config_sources,
    dynamic_properties,
    effective_role,
    image_facts,
    memory_limit,
    mount_jars,
    quantity_bytes,
    replicas_of,
    role_of,
    script_entrypoint,
)
from flinktune.deployment.dockerfile import DockerImage
from flinktune.deployment.model import (
    CONF_DIR,
    JOBMANAGER,
    TASKMANAGER,
    ConfigSource,
    EnvVar,
    Found,
    Mount,
    Process,
    Service,
    Where,
)
from flinktune.deployment.nodes import View

if TYPE_CHECKING:
    from flinktune.deployment.readers import ReadContext


WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Pod", "CronJob",
             "ReplicationController")
OPERATOR_KINDS = ("FlinkDeployment",)


def _pod_spec(kind: str, obj: View) -> View | None:
    if kind == "Pod":
        return obj.get("spec")
    if kind == "CronJob":
        return obj.path("spec", "jobTemplate", "spec", "template", "spec")
    return obj.path("spec", "template", "spec")


def _labels(view: View | None) -> tuple[tuple[str, str], ...]:
    if view is None or not view.is_map:
        return ()
    return tuple((key, value.text or "") for key, value, _line in view.items())


def _volumes(spec: View, file: str, namespace: str | None, claims: dict[str, str]) -> dict[str, tuple]:
    """volume name -> (kind, source, shared key, items, access, line)."""
    out: dict[str, tuple] = {}
    volumes = spec.get("volumes")
    for volume in volumes.list() if volumes is not None else []:
        name = volume.str_at("name")
        if not name:
            continue
        if volume.get("configMap") is not None:
            cm = volume.get("configMap")
            items_view = cm.get("items") if cm is not None else None
            items = tuple((item.str_at("key") or "", item.str_at("path") or "")
                          for item in (items_view.list() if items_view is not None else []))
            cm_name = cm.str_at("name") if cm is not None else None
            out[name] = ("configmap", cm_name or "", f"configmap:{namespace}:{cm_name}", items, "",
                         volume.line)
        elif volume.get("persistentVolumeClaim") is not None:
            claim = volume.str_at("persistentVolumeClaim", "claimName") or ""
            access = claims.get(claim, "")
            out[name] = ("pvc", claim, f"pvc:{namespace}:{claim}", (), access, volume.line)
        elif volume.get("emptyDir") is not None:
            out[name] = ("emptyDir", name, None, (), "", volume.line)
        elif volume.get("hostPath") is not None:
            path = volume.str_at("hostPath", "path") or ""
            out[name] = ("hostPath", path, f"hostpath:{path}", (), "", volume.line)
        elif volume.get("secret") is not None:
            out[name] = ("secret", volume.str_at("secret", "secretName") or "", None, (), "", volume.line)
        else:
            out[name] = ("other", name, None, (), "", volume.line)
    return out


def _container_mounts(container: View, volumes: dict[str, tuple], file: str,
                      templates: dict[str, str]) -> tuple[Mount, ...]:
    mounts: list[Mount] = []
    view = container.get("volumeMounts")
    for item in view.list() if view is not None else []:
        name = item.str_at("name") or ""
        path = (item.str_at("mountPath") or "").rstrip("/")
        if not path:
            continue
        sub_path = item.str_at("subPath")
        read_only = (item.str_at("readOnly") or "false").lower() == "true"
        where = Where(file, item.line, f"volume {name} mounted at {path}")
        if name in templates:
            mounts.append(Mount(path, "pvc", f"{name} (per-pod claim of the StatefulSet)", None, read_only,
                                where,
                                access=templates[name], sub_path=sub_path))
            continue
        kind, source, shared, items, access, _line = volumes.get(name, ("other", name, None, (), "", None))
        if kind == "configmap":
            read_only = True
        if sub_path and shared is not None:
            shared = f"{shared}/{sub_path}"
        mounts.append(Mount(path, kind, source, shared, read_only, where, access=access, items=items,
                            sub_path=sub_path))
    return tuple(mounts)


def _env(container: View, file: str) -> tuple[EnvVar, ...]:
    found = []
    view = container.get("env")
    for item in view.list() if view is not None else []:
        name = item.str_at("name")
        if not name:
            continue
        value_view = item.get("value")
        value = value_view.text if value_view is not None else None
        first = value_view.block_first_line if value_view is not None else None
        line = value_view.line if value_view is not None else item.line
        found.append(EnvVar(name, value, Where(file, item.line),
                            first_line=first if first is not None else line))
    return tuple(found)


def _strings(view: View | None) -> tuple[str, ...]:
    return tuple(view.scalars()) if view is not None else ()


def _memory_limit(container: View, file: str) -> tuple[int | None, Where | None]:
    view = container.path("resources", "limits", "memory")
    if view is None or view.text is None:
        return None, None
    return (memory_limit(view.text, quantity_bytes, file, view.line, "resources.limits.memory"),
            Where(file, view.line, f"memory limit {view.text}"))


def _process(kind: str, name: str, obj: View, container: View, spec: View, file: str, namespace: str | None,
             claims: dict[str, str], role: str, dockerfile: DockerImage | None, assumed: bool,
             labels: tuple[tuple[str, str], ...]) -> Process:
    templates: dict[str, str] = {}
    if kind == "StatefulSet":
        vct = obj.path("spec", "volumeClaimTemplates")
        for claim in vct.list() if vct is not None else []:
            claim_name = claim.str_at("metadata", "name")
            if claim_name:
                templates[claim_name] = " ".join(_strings(claim.path("spec", "accessModes")))
    volumes = _volumes(spec, file, namespace, claims)
    mounts = _container_mounts(container, volumes, file, templates)
    image = container.str_at("image")
    facts = image_facts(image, dockerfile)
    command = _strings(container.get("command")) + _strings(container.get("args"))
    command_view = container.get("args") or container.get("command")
    command_where = Where(file, command_view.line, "args") if command_view is not None else None
    if container.get("command") is not None:
        words = _strings(container.get("command"))
        facts["official"] = bool(facts["official"]) and any("docker-entrypoint" in w for w in words)
    # Kubernetes: command replaces the image's ENTRYPOINT, args its CMD and are appended to the entrypoint.
    script = script_entrypoint(_strings(container.get("command")) if container.get("command") is not None
                               else dockerfile.entrypoint if dockerfile is not None else None)
    role, intended = effective_role(script, _strings(container.get("args")), role)
    script_where = None
    if script and container.get("command") is not None:
        script_where = Where(file, container.get("command").line, "command")  # type: ignore[union-attr]
    elif script and dockerfile is not None:
        script_where = dockerfile.entrypoint_where
    env = _env(container, file)
    conf_dir = next((var.value for var in env if var.name == "FLINK_CONF_DIR" and var.value),
                    None) or CONF_DIR
    sources = config_sources(mounts, dockerfile if assumed or dockerfile is not None else None,
                             os.path.dirname(dockerfile.path) if dockerfile is not None else None, conf_dir)
    memory, memory_where = _memory_limit(container, file)
    replicas_view = obj.path("spec", "replicas")
    replicas, known = replicas_of(replicas_view)
    image_view = container.get("image")
    return Process(
        name=f"{name}/{container.str_at('name') or ''}", role=role, platform="kubernetes",
        where=Where(file, obj.line, f"{kind} {name}"), group=os.path.dirname(os.path.abspath(file)),
        image=image, image_where=Where(file, image_view.line,
                                       f"image {image}") if image_view is not None else None,
        flink_version=facts["flink_version"], flink_patch=facts["flink_patch"],  # type: ignore[arg-type]
        version_source=str(facts["version_source"]), jdk=facts["jdk"],  # type: ignore[arg-type]
        image_moving=bool(facts["image_moving"]), official=bool(facts["official"]),
            image_official=bool(facts["image_official"]), command=command,
        command_where=command_where, dynamic=dynamic_properties(command, command_where or Where(file,
                                                                                                obj.line)),
        env=env, mounts=mounts, config=sources,
        jars=(dockerfile.jars if dockerfile is not None else ()) + mount_jars(mounts),
        memory_limit_bytes=memory, memory_limit_where=memory_where, replicas=replicas,
        replicas_where=Where(file, replicas_view.line) if replicas_view is not None else None,
        replicas_known=known, hostnames=(), networks=("kubernetes",), labels=labels, namespace=namespace,
        dockerfile=dockerfile.path if dockerfile is not None else None, dockerfile_assumed=assumed,
        entrypoint_overridden=container.get("command") is not None, entrypoint=script,
        entrypoint_where=script_where, intended_role=intended)


def _operator_processes(obj: View, file: str, namespace: str | None, name: str,
                        dockerfile: DockerImage | None = None) -> list[Process]:
    """The JobManager and TaskManager pods the operator runs for a FlinkDeployment (``dockerfile``: the
    one beside the manifest that presumably builds a custom ``spec.image``)."""
    spec = obj.get("spec")
    if spec is None:
        return []
    image = spec.str_at("image")
    facts = image_facts(image, None)
    if not facts["official"] and dockerfile is not None:
        facts = image_facts(image, dockerfile)
    else:
        dockerfile = None
    stated = spec.str_at("flinkVersion")
    version = facts["flink_version"]
    source = str(facts["version_source"])
    if stated:
        version = stated.lstrip("vV").replace("_", ".")
        source = f"spec.flinkVersion {stated}"
    image_view = spec.get("image")
    processes = []
    for role, field in ((JOBMANAGER, "jobManager"), (TASKMANAGER, "taskManager")):
        memory_view = spec.path(field, "resource", "memory")
        memory = None
        if memory_view is not None and memory_view.text is not None:
            from flinktune.units import parse_memory_size

            try:
                memory = parse_memory_size(memory_view.text).bytes
            except Exception:
                memory = quantity_bytes(memory_view.text)
        mounts: list[Mount] = []
        env: list[EnvVar] = []
        for template in (spec.get("podTemplate"), spec.path(field, "podTemplate")):
            if template is None:
                continue
            pod = template.get("spec")
            if pod is None:
                continue
            volumes = _volumes(pod, file, namespace, {})
            containers = pod.get("containers")
            for container in containers.list() if containers is not None else []:
                if container.str_at("name") == "flink-main-container":
                    mounts.extend(_container_mounts(container, volumes, file, {}))
                    env.extend(_env(container, file))
        replicas_view = spec.path(field, "replicas")
        standalone = (spec.str_at("mode") or "native") == "standalone"
        replicas = 1
        if replicas_view is not None and replicas_view.text and replicas_view.text.isdigit():
            replicas = int(replicas_view.text)
        processes.append(Process(
            name=f"{name}/{role}", role=role, platform="operator", where=Where(file, obj.line,
                                                                               f"FlinkDeployment {name}"),
            group=os.path.dirname(os.path.abspath(file)), image=image,
            image_where=Where(file, image_view.line, f"image {image}") if image_view is not None else None,
            flink_version=version, flink_patch=facts["flink_patch"],  # type: ignore[arg-type]
            version_source=source, jdk=facts["jdk"], image_moving=bool(facts["image_moving"]),  # type: ignore[arg-type]
            official=True, image_official=bool(facts["image_official"]), env=tuple(env), mounts=tuple(mounts),
            jars=dockerfile.jars if dockerfile is not None else (),
            dockerfile=dockerfile.path if dockerfile is not None else None,
            dockerfile_assumed=dockerfile is not None,
            config=(ConfigSource(None, None, None, CONF_DIR, "operator", False, Where(file, obj.line)),),
            memory_limit_bytes=memory,
            memory_limit_where=Where(file, memory_view.line,
                                     f"spec.{field}.resource.memory") if memory_view else None,
            replicas=replicas, replicas_known=standalone or role == JOBMANAGER, namespace=namespace,
            networks=("kubernetes",)))
    return processes


def nearest_dockerfile(manifest: str, context: ReadContext) -> DockerImage | None:
    """The one Dockerfile FROM an official Flink image in the manifest's folder or above it (up to the
    root of the run), when there is exactly one: a manifest that runs a custom image usually sits beside
    the Dockerfile that builds it."""
    from flinktune.deployment.images import parse_image

    folder = os.path.dirname(os.path.abspath(manifest))
    stop = os.path.abspath(context.root) if context.root else None
    candidates = []
    for image in context.images.values():
        base = parse_image(image.base) if image is not None and image.base else None
        if image is not None and base is not None and base.official:
            candidates.append(image)
    places = [(image, os.path.dirname(os.path.abspath(image.path))) for image in candidates]
    while True:
        here = [image for image, place in places if place == folder]
        below = [image for image, place in places if place == folder or place.startswith(folder + os.sep)]
        if len(below) == 1:
            return below[0]
        if len(below) > 1:
            return here[0] if len(here) == 1 else None
        parent = os.path.dirname(folder)
        if parent == folder or (stop is not None and not folder.startswith(stop)) or folder == stop:
            return None
        folder = parent


def _overlays(processes: list[Process]) -> list[ConfigDocument]:
    """The FLINK_PROPERTIES of the containers, as configuration documents whose lines point into the
    manifest."""
    from flinktune.config.flat import parse_flat_lines
    from flinktune.config.types import ConfigFormat

    documents = []
    for process in processes:
        var = process.env_var(FLINK_PROPERTIES)
        if process.platform != "kubernetes" or var is None or not var.value:
            continue
        entries, issues = parse_flat_lines(iter(var.value.split("\n")), var.where.file,
                                           first_line=var.first_line or var.where.line or 1)
        documents.append(ConfigDocument(path=var.where.file, format=ConfigFormat.FLAT, entries=entries,
                                        issues=issues, name=f"{process.name} {FLINK_PROPERTIES}",
                                        origin=FLINK_PROPERTIES))
    return documents


def read(path: str, text: str, context: ReadContext) -> Found:
    """The reader of ``readers.READERS``."""
    from flinktune.config.yaml_config import compose_documents

    return read_views(path, [View(node) for node in compose_documents(text, file=path)], context)


def read_views(file: str, roots: list[View], context: ReadContext) -> Found:
    """What the manifests of one file (``roots``, their YAML documents) hold: processes, Services,
    ConfigMap names, the access modes of PersistentVolumeClaims, and the containers' FLINK_PROPERTIES."""
    dockerfile = nearest_dockerfile(file, context)
    processes, services, configmaps, claims = _read_manifests(file, roots, dockerfile, dockerfile is not None)
    return Found(processes=tuple(processes), services=tuple(services), documents=tuple(_overlays(processes)),
                 configmaps=tuple(configmaps), claims=tuple(claims.items()))


def _read_manifests(file: str, roots: list[View], dockerfile: DockerImage | None, assumed: bool
                    ) -> tuple[list[Process], list[Service], list[tuple[str, str | None, str]], dict[str,
                                                                                                     str]]:
    processes: list[Process] = []
    services: list[Service] = []
    configmaps: list[tuple[str, str | None, str]] = []
    claims: dict[str, str] = {}
    for obj in roots:
        if obj.is_map and obj.str_at("kind") == "PersistentVolumeClaim":
            claims[obj.str_at("metadata", "name") or ""] = " ".join(_strings(obj.path("spec", "accessModes")))
    for obj in roots:
        if not obj.is_map:
            continue
        kind = obj.str_at("kind") or ""
        name = obj.str_at("metadata", "name") or ""
        namespace = obj.str_at("metadata", "namespace")
        if kind == "Service":
            ports = obj.path("spec", "ports")
            numbers = []
            for port in ports.list() if ports is not None else []:
                text = port.str_at("port")
                if text and text.isdigit():
                    numbers.append(int(text))
            services.append(Service(name, namespace, _labels(obj.path("spec", "selector")), tuple(numbers),
                                    Where(file, obj.line, f"Service {name}"),
                                    headless=(obj.str_at("spec", "clusterIP") or "") == "None"))
        elif kind == "ConfigMap":
            configmaps.append((name, namespace, file))
        elif kind in OPERATOR_KINDS:
            processes.extend(_operator_processes(obj, file, namespace, name, dockerfile if assumed else None))
        elif kind in WORKLOADS:
            spec = _pod_spec(kind, obj)
            if spec is None:
                continue
            labels = _labels(obj.path("spec", "template", "metadata", "labels")) or _labels(
                obj.path("metadata", "labels"))
            containers = spec.get("containers")
            for container in containers.list() if containers is not None else []:
                command = _strings(container.get("command")) + _strings(container.get("args"))
                label_names = " ".join(value for _key, value in labels)
                role = role_of(command, container.str_at("name") or "", name, label_names)
                image = container.str_at("image") or ""
                facts = image_facts(image, dockerfile if assumed else None)
                flinkish = bool(facts["official"]) or "flink" in image.lower() or (
                    role is not None and assumed)
                if role is None or not flinkish:
                    continue
                own = image_facts(image, None)
                use_dockerfile = dockerfile if assumed and not own["official"] else None
                processes.append(_process(kind, name, obj, container, spec, file, namespace, claims, role,
                                          use_dockerfile, use_dockerfile is not None, labels))
    return processes, services, configmaps, claims
