// A small Kustomize renderer for the subset k8s/ uses: resources (files and directories),
// namespace, labels (includeSelectors: false), images, secretGenerator with
// generatorOptions.disableNameSuffixHash, and patches given as strategic-merge files or inline
// patches without a target. Anything else in a kustomization.yaml is refused, so that the
// validator never checks something other than what `kubectl apply -k` would apply.
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";

const KNOWN_KEYS = new Set([
  "apiVersion",
  "kind",
  "resources",
  "namespace",
  "labels",
  "images",
  "patches",
  "secretGenerator",
  "generatorOptions",
]);

// Kinds without a namespace (those that could appear here).
const CLUSTER_SCOPED = new Set([
  "Namespace",
  "ClusterRole",
  "ClusterRoleBinding",
  "CustomResourceDefinition",
  "PriorityClass",
  "StorageClass",
  "PersistentVolume",
  "ClusterTriggerAuthentication",
]);

// Built-in API groups: strategic merge knows their list merge keys. Custom resources are merged
// as JSON merge patches (lists replaced whole), as Kustomize does.
function builtIn(apiVersion) {
  const group = apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
  return group === "" || !group.includes(".") || group.endsWith(".k8s.io");
}

// List fields of built-in kinds that strategic merge merges element by element, by this key.
const MERGE_KEYS = {
  containers: "name",
  initContainers: "name",
  env: "name",
  volumes: "name",
  volumeMounts: "mountPath",
  ports: null, // containerPort for containers, port for services: decided per element below
  imagePullSecrets: "name",
  tolerations: null,
};

export class RenderError extends Error {}

function fail(msg) {
  throw new RenderError(msg);
}

export function loadYamlDocs(file) {
  const text = fs.readFileSync(file, "utf8");
  const docs = YAML.parseAllDocuments(text, { prettyErrors: true });
  const out = [];
  for (const d of docs) {
    if (d.errors.length) fail(`${file}: ${d.errors.map((e) => e.message).join("; ")}`);
    const v = d.toJS({ maxAliasCount: 0 });
    if (v === null || v === undefined) continue;
    if (typeof v !== "object" || Array.isArray(v)) fail(`${file}: a document is not a mapping`);
    v.__source = file;
    out.push(v);
  }
  return out;
}

function isObj(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function mergeKeyFor(field, a, b) {
  if (!(field in MERGE_KEYS)) return undefined;
  const k = MERGE_KEYS[field];
  if (k) return k;
  if (field === "ports") {
    const el = a[0] ?? b[0];
    if (el && "containerPort" in el) return "containerPort";
    if (el && "port" in el) return "port";
  }
  return undefined;
}

// Strategic merge of `patch` into `base` (built-in kinds), or JSON merge (custom resources).
function merge(base, patch, strategic, where) {
  if (!isObj(base) || !isObj(patch)) return structuredClone(patch);
  const out = { ...base };
  for (const [k, pv] of Object.entries(patch)) {
    if (k.startsWith("$")) fail(`${where}: patch directive ${k} is not supported by this renderer`);
    if (pv === null) {
      delete out[k];
      continue;
    }
    const bv = base[k];
    if (Array.isArray(pv) && Array.isArray(bv) && strategic) {
      const key = mergeKeyFor(k, bv, pv);
      if (key) {
        const result = bv.map((e) => structuredClone(e));
        for (const pe of pv) {
          if (!isObj(pe) || !(key in pe)) fail(`${where}: an element of ${k} has no ${key}`);
          const i = result.findIndex((e) => isObj(e) && e[key] === pe[key]);
          if (i >= 0) result[i] = merge(result[i], pe, strategic, `${where}.${k}`);
          else result.push(structuredClone(pe));
        }
        out[k] = result;
        continue;
      }
    }
    out[k] = isObj(pv) && isObj(bv) ? merge(bv, pv, strategic, `${where}.${k}`) : structuredClone(pv);
  }
  return out;
}

function podSpecsOf(obj) {
  const specs = [];
  const s = obj.spec;
  if (!isObj(s)) return specs;
  if (obj.kind === "Pod") specs.push(s);
  if (isObj(s.template) && isObj(s.template.spec)) specs.push(s.template.spec);
  if (isObj(s.jobTemplate) && isObj(s.jobTemplate.spec?.template?.spec))
    specs.push(s.jobTemplate.spec.template.spec);
  return specs;
}

function podTemplatesOf(obj) {
  const s = obj.spec;
  const t = [];
  if (!isObj(s)) return t;
  if (isObj(s.template)) t.push(s.template);
  if (isObj(s.jobTemplate?.spec?.template)) t.push(s.jobTemplate.spec.template);
  return t;
}

const WORKLOADS = new Set(["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"]);

function imageName(image) {
  // registry/name[:tag][@digest]: the name is everything before the tag or digest.
  const at = image.indexOf("@");
  const noDigest = at >= 0 ? image.slice(0, at) : image;
  const slash = noDigest.lastIndexOf("/");
  const colon = noDigest.lastIndexOf(":");
  return colon > slash ? noDigest.slice(0, colon) : noDigest;
}

function generateSecrets(dir, gens, options, notes) {
  const out = [];
  for (const g of gens ?? []) {
    for (const k of Object.keys(g))
      if (!["name", "type", "files", "literals", "envs", "behavior", "options"].includes(k))
        fail(`${dir}: secretGenerator field ${k} is not supported by this renderer`);
    if (g.behavior && g.behavior !== "create") fail(`${dir}: secretGenerator behavior ${g.behavior}`);
    const data = {};
    for (const f of g.files ?? []) {
      const [key, rel] = f.includes("=") ? f.split(/=(.*)/s, 2) : [path.basename(f), f];
      const file = path.join(dir, rel);
      if (fs.existsSync(file)) data[key] = fs.readFileSync(file).toString("base64");
      else {
        data[key] = "";
        notes.push(`secret ${g.name}: ${file} is absent (kubectl apply -k needs it)`);
      }
    }
    for (const l of g.literals ?? []) {
      const [key, value] = l.split(/=(.*)/s, 2);
      data[key] = Buffer.from(value ?? "").toString("base64");
    }
    if (g.envs?.length) fail(`${dir}: secretGenerator envs are not supported by this renderer (use files)`);
    out.push({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: g.name },
      type: g.type ?? "Opaque",
      data,
      __source: path.join(dir, "kustomization.yaml"),
      __generated: true,
    });
  }
  if (out.length && options?.disableNameSuffixHash !== true)
    fail(`${dir}: generated names with hash suffixes are not supported: set generatorOptions.disableNameSuffixHash`);
  return out;
}

/** Renders the kustomization in `dir`. Returns {objects, notes}. */
export function render(dir, notes = []) {
  const kfile = path.join(dir, "kustomization.yaml");
  if (!fs.existsSync(kfile)) fail(`${dir}: no kustomization.yaml`);
  const [k] = loadYamlDocs(kfile);
  for (const key of Object.keys(k))
    if (!KNOWN_KEYS.has(key) && key !== "__source")
      fail(`${kfile}: "${key}" is not supported by this renderer (supported: ${[...KNOWN_KEYS].join(", ")})`);
  if (k.kind !== "Kustomization") fail(`${kfile}: kind must be Kustomization`);

  let objects = [];
  for (const r of k.resources ?? []) {
    const p = path.join(dir, r);
    if (!fs.existsSync(p)) fail(`${kfile}: resource ${r} does not exist`);
    if (fs.statSync(p).isDirectory()) objects.push(...render(p, notes).objects);
    else objects.push(...loadYamlDocs(p));
  }
  objects.push(...generateSecrets(dir, k.secretGenerator, k.generatorOptions, notes));

  for (const p of k.patches ?? []) {
    if (p.target || p.options) fail(`${kfile}: patches with a target or options are not supported`);
    const docs = p.path ? loadYamlDocs(path.join(dir, p.path)) : p.patch ? [YAML.parse(p.patch)] : [];
    if (!docs.length) fail(`${kfile}: a patch has neither path nor patch`);
    for (const d of docs) {
      const where = `${kfile}: patch ${p.path ?? "(inline)"} ${d.kind}/${d.metadata?.name}`;
      const hits = objects.filter(
        (o) =>
          o.kind === d.kind &&
          o.apiVersion === d.apiVersion &&
          o.metadata?.name === d.metadata?.name &&
          (!d.metadata?.namespace || o.metadata?.namespace === d.metadata.namespace),
      );
      if (hits.length !== 1) fail(`${where}: matches ${hits.length} objects, expected 1`);
      const i = objects.indexOf(hits[0]);
      const { __source, ...patch } = d;
      objects[i] = { ...merge(hits[0], patch, builtIn(d.apiVersion), where), __source: hits[0].__source };
    }
  }

  if (k.namespace) {
    for (const o of objects) {
      if (o.kind === "Namespace") {
        if (o.metadata.name !== k.namespace)
          fail(`${kfile}: Namespace ${o.metadata.name} differs from namespace ${k.namespace}`);
        continue;
      }
      if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = k.namespace;
    }
  }

  for (const l of k.labels ?? []) {
    if (l.includeSelectors) fail(`${kfile}: labels with includeSelectors are not supported`);
    for (const o of objects) {
      o.metadata.labels = { ...(o.metadata.labels ?? {}), ...l.pairs };
      if (l.includeTemplates && WORKLOADS.has(o.kind))
        for (const t of podTemplatesOf(o)) {
          t.metadata ??= {};
          t.metadata.labels = { ...(t.metadata.labels ?? {}), ...l.pairs };
        }
    }
  }

  for (const img of k.images ?? []) {
    for (const o of objects)
      for (const spec of podSpecsOf(o))
        for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
          if (typeof c.image !== "string" || imageName(c.image) !== img.name) continue;
          const name = img.newName ?? img.name;
          c.image = img.digest ? `${name}@${img.digest}` : img.newTag ? `${name}:${img.newTag}` : name;
        }
  }
  return { objects, notes };
}
