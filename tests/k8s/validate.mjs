// Validates leadflow's Kubernetes manifests and Dockerfile:
//   node validate.mjs REPO_ROOT
// 1. renders k8s/base and every k8s/overlays/* with render.mjs;
// 2. validates every object against its JSON Schema (kubernetes-models for the core API, and the
//    CRD schemas of Strimzi, CloudNativePG, KEDA and prometheus-operator), and refuses fields
//    the schema does not know (a misspelt field is otherwise dropped by the API server);
// 3. checks leadflow's own invariants (security context, probes, resources, topics, ACLs,
//    autoscaling, network policy, secrets, monitors: every job an alert rule reads is scraped)
//    and the Dockerfile.
// Exit status 1 with every problem listed, 0 when all hold.
import fs from "node:fs";
import path from "node:path";
import { render, loadYamlDocs, RenderError } from "./render.mjs";

import * as core from "kubernetes-models/v1";
import * as apps from "kubernetes-models/apps/v1";
import * as policy from "kubernetes-models/policy/v1";
import * as autoscaling from "kubernetes-models/autoscaling/v2";
import * as networking from "kubernetes-models/networking.k8s.io/v1";
import * as batch from "kubernetes-models/batch/v1";
import * as rbac from "kubernetes-models/rbac.authorization.k8s.io/v1";
import * as strimzi from "@kubernetes-models/strimzi-kafka-operator/kafka.strimzi.io/v1";
import * as cnpg from "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1";
import * as keda from "@kubernetes-models/keda/keda.sh/v1alpha1";
import * as prom from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";

const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname ?? ".", "../.."));
const problems = [];
const problem = (where, msg) => problems.push(`${where}: ${msg}`);

// ------------------------------------------------------------------------------------------
// Schemas
// ------------------------------------------------------------------------------------------
const models = new Map();
for (const mod of [core, apps, policy, autoscaling, networking, batch, rbac, strimzi, cnpg, keda, prom])
  for (const cls of Object.values(mod))
    if (typeof cls === "function" && cls.apiVersion && cls.kind && !cls.kind.endsWith("List"))
      models.set(`${cls.apiVersion}/${cls.kind}`, cls);

// Wraps a value so that every property the schema's validator looks at is recorded. An object
// whose properties the validator looked up one by one has a typed schema: a key it never looked
// up is unknown to the schema. An object it enumerated (a map, such as labels) or never looked
// into (x-kubernetes-preserve-unknown-fields, such as Kafka's config) may hold any key.
function tracked(value, where, log) {
  if (Array.isArray(value)) return value.map((v, i) => tracked(v, `${where}[${i}]`, log));
  if (value === null || typeof value !== "object") return value;
  const rec = { where, keys: Object.keys(value), looked: new Set(), enumerated: false };
  log.push(rec);
  const target = {};
  for (const k of rec.keys) target[k] = tracked(value[k], where ? `${where}.${k}` : k, log);
  return new Proxy(target, {
    get(t, k, r) {
      if (typeof k === "string") rec.looked.add(k);
      return Reflect.get(t, k, r);
    },
    has(t, k) {
      if (typeof k === "string") rec.looked.add(k);
      return Reflect.has(t, k);
    },
    ownKeys(t) {
      rec.enumerated = true;
      return Reflect.ownKeys(t);
    },
    getOwnPropertyDescriptor(t, k) {
      if (typeof k === "string") rec.looked.add(k);
      return Reflect.getOwnPropertyDescriptor(t, k);
    },
  });
}

function stripInternal(o) {
  const { __source, __generated, ...rest } = o;
  return rest;
}

function validateSchema(obj, where) {
  const cls = models.get(`${obj.apiVersion}/${obj.kind}`);
  if (!cls) return problem(where, `no schema for ${obj.apiVersion} ${obj.kind}`);
  const log = [];
  try {
    cls.prototype.validate.call(tracked(stripInternal(obj), "", log));
  } catch (e) {
    return problem(where, `schema: ${e.message}`);
  }
  for (const rec of log) {
    if (rec.enumerated || rec.looked.size === 0) continue;
    for (const k of rec.keys)
      if (!rec.looked.has(k)) problem(where, `schema: unknown field ${rec.where ? rec.where + "." : ""}${k}`);
  }
}

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------
const id = (o) => `${o.kind}/${o.metadata?.namespace ? o.metadata.namespace + "/" : ""}${o.metadata?.name}`;
const byKind = (objs, kind) => objs.filter((o) => o.kind === kind);
const find = (objs, kind, name) => objs.find((o) => o.kind === kind && o.metadata?.name === name);
const matches = (selector, labels) =>
  Object.entries(selector ?? {}).every(([k, v]) => (labels ?? {})[k] === v);

function ipv4(cidr) {
  const [addr, bits] = cidr.split("/");
  const parts = addr.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !(p >= 0 && p <= 255))) return null;
  const n = ((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0;
  const len = bits === undefined ? 32 : Number(bits);
  return { n, len };
}
// Whether `outer` contains all of `inner` (both IPv4 CIDRs).
function covers(outer, inner) {
  const o = ipv4(outer), i = ipv4(inner);
  if (!o || !i || o.len > i.len) return false;
  const mask = o.len === 0 ? 0 : (~0 << (32 - o.len)) >>> 0;
  return (o.n & mask) === (i.n & mask);
}

// The LEADFLOW_* settings leadflow knows, read from its configuration parser.
function knownSettings() {
  const src = fs.readFileSync(path.join(root, "common/base/src/config.cpp"), "utf8");
  const start = src.indexOf("names = {");
  const end = src.indexOf("};", start);
  const names = new Set(src.slice(start, end).match(/"LEADFLOW_[A-Z0-9_]+"/g).map((s) => s.slice(1, -1)));
  if (names.size < 20) throw new Error("could not read the settings list from config.cpp");
  return names;
}
const SETTINGS = knownSettings();

// The environment of a container: {name: {value} | {secret, key, optional} | ...}, with envFrom
// ConfigMaps resolved against the rendered objects.
function environment(objs, ns, c, where) {
  const env = {};
  for (const ef of c.envFrom ?? []) {
    if (ef.configMapRef) {
      const cm = objs.find((o) => o.kind === "ConfigMap" && o.metadata.name === ef.configMapRef.name && o.metadata.namespace === ns);
      if (!cm) problem(where, `envFrom ConfigMap ${ef.configMapRef.name} is not in the manifests`);
      else for (const [k, v] of Object.entries(cm.data ?? {})) env[k] = { value: v };
    }
  }
  for (const e of c.env ?? []) env[e.name] = e.valueFrom ? { from: e.valueFrom } : { value: e.value ?? "" };
  return env;
}

// ------------------------------------------------------------------------------------------
// Secrets: what the manifests make, and what the operators make from the custom resources.
// ------------------------------------------------------------------------------------------
function availableSecrets(objs) {
  const s = new Map(); // "ns/name" -> Set of keys (null: any key)
  const add = (ns, name, keys) => s.set(`${ns}/${name}`, keys ? new Set(keys) : null);
  for (const o of objs) {
    const ns = o.metadata.namespace;
    if (o.kind === "Secret") add(ns, o.metadata.name, [...Object.keys(o.data ?? {}), ...Object.keys(o.stringData ?? {})]);
    if (o.kind === "Kafka") {
      add(ns, `${o.metadata.name}-cluster-ca-cert`, ["ca.crt", "ca.p12", "ca.password"]);
      add(ns, `${o.metadata.name}-clients-ca-cert`, ["ca.crt", "ca.p12", "ca.password"]);
    }
    if (o.kind === "KafkaUser") {
      const t = o.spec?.authentication?.type;
      if (t === "tls") add(ns, o.metadata.name, ["ca.crt", "user.crt", "user.key", "user.p12", "user.password"]);
      if (t === "scram-sha-512") add(ns, o.metadata.name, ["password", "sasl.jaas.config"]);
    }
    if (o.kind === "Cluster" && o.apiVersion.startsWith("postgresql.cnpg.io/")) {
      const n = o.metadata.name;
      if (o.spec?.bootstrap?.initdb && !o.spec.bootstrap.initdb.secret)
        add(ns, `${n}-app`, ["username", "user", "password", "dbname", "host", "port", "uri", "jdbc-uri", "pgpass", "fqdn-uri", "fqdn-jdbc-uri"]);
      if (!o.spec?.certificates?.serverCASecret) add(ns, `${n}-ca`, ["ca.crt", "ca.key"]);
      if (!o.spec?.certificates?.serverTLSSecret) add(ns, `${n}-server`, ["tls.crt", "tls.key"]);
      add(ns, `${n}-replication`, ["tls.crt", "tls.key"]);
      if (o.spec?.enableSuperuserAccess) add(ns, `${n}-superuser`, ["username", "password", "pgpass", "uri"]);
    }
  }
  return s;
}

function secretRefs(o) {
  const refs = []; // {name, key?, where}
  const ns = o.metadata.namespace;
  const spec = o.spec ?? {};
  const pods = [];
  if (spec.template?.spec) pods.push(spec.template.spec);
  if (spec.jobTemplate?.spec?.template?.spec) pods.push(spec.jobTemplate.spec.template.spec);
  for (const p of pods) {
    for (const v of p.volumes ?? []) {
      if (v.secret) {
        if (v.secret.items?.length) for (const it of v.secret.items) refs.push({ name: v.secret.secretName, key: it.key, where: `volume ${v.name}` });
        else refs.push({ name: v.secret.secretName, where: `volume ${v.name}` });
      }
      for (const src of v.projected?.sources ?? [])
        if (src.secret) refs.push({ name: src.secret.name, where: `volume ${v.name}` });
    }
    for (const s of p.imagePullSecrets ?? []) refs.push({ name: s.name, where: "imagePullSecrets" });
    for (const c of [...(p.containers ?? []), ...(p.initContainers ?? [])]) {
      for (const e of c.env ?? [])
        if (e.valueFrom?.secretKeyRef) refs.push({ name: e.valueFrom.secretKeyRef.name, key: e.valueFrom.secretKeyRef.key, where: `env ${e.name}` });
      for (const ef of c.envFrom ?? []) if (ef.secretRef) refs.push({ name: ef.secretRef.name, where: "envFrom" });
    }
  }
  if (o.kind === "Cluster") {
    const s3 = spec.backup?.barmanObjectStore?.s3Credentials;
    for (const [k, v] of Object.entries(s3 ?? {})) if (v?.name) refs.push({ name: v.name, key: v.key, where: `backup s3Credentials.${k}` });
    if (spec.bootstrap?.initdb?.secret) refs.push({ name: spec.bootstrap.initdb.secret.name, where: "bootstrap.initdb.secret" });
  }
  if (o.kind === "TriggerAuthentication")
    for (const r of spec.secretTargetRef ?? []) refs.push({ name: r.name, key: r.key, where: `secretTargetRef ${r.parameter}` });
  return refs.map((r) => ({ ...r, ns }));
}

// ------------------------------------------------------------------------------------------
// Invariants
// ------------------------------------------------------------------------------------------
const PRIVATE_V4 = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16"];
const METADATA_ADDRESS = "169.254.169.254/32";

// Least privilege for each process's KafkaUser: exactly these operations (topic names relative
// to LEADFLOW_TOPIC_PREFIX, group names as given). Derived from what the code does: the ingest
// produces leads, may tail results (consumer outside a group, group id "<prefix>.tail.*"), and
// describes all four topics at start; workers consume leads and retry in their group and
// produce retry, dead and results; KEDA reads the group's offsets and the topic's.
function expectedAcls(prefix, group) {
  return {
    "leadflow-ingest": {
      [`topic:${prefix}.leads:literal`]: ["Describe", "Write"],
      [`topic:${prefix}.results:literal`]: ["Describe", "Read"],
      [`topic:${prefix}.leads.retry:literal`]: ["Describe"],
      [`topic:${prefix}.leads.dead:literal`]: ["Describe"],
      [`group:${prefix}.tail.:prefix`]: ["Read"],
    },
    "leadflow-worker": {
      [`topic:${prefix}.leads:literal`]: ["Describe", "Read"],
      [`topic:${prefix}.leads.retry:literal`]: ["Describe", "Read", "Write"],
      [`topic:${prefix}.leads.dead:literal`]: ["Describe", "Write"],
      [`topic:${prefix}.results:literal`]: ["Describe", "Write"],
      [`group:${group}:literal`]: ["Read"],
    },
    "leadflow-keda": {
      [`topic:${prefix}.leads:literal`]: ["Describe"],
      [`group:${group}:literal`]: ["Describe"],
    },
  };
}

function checkContainers(objs, d, where, production) {
  const spec = d.spec.template.spec;
  const podSc = spec.securityContext ?? {};
  const ns = d.metadata.namespace;
  if (spec.automountServiceAccountToken !== false) problem(where, "automountServiceAccountToken must be false (leadflow never calls the API server)");
  if (podSc.runAsUser === 0) problem(where, "pod runs as uid 0");
  if (!(spec.topologySpreadConstraints?.length)) problem(where, "no topologySpreadConstraints");
  const volumes = new Map((spec.volumes ?? []).map((v) => [v.name, v]));
  for (const c of spec.containers ?? []) {
    const w = `${where} container ${c.name}`;
    const sc = c.securityContext ?? {};
    if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) !== true) problem(w, "runAsNonRoot is not true");
    if ((sc.runAsUser ?? podSc.runAsUser) === 0) problem(w, "runs as uid 0");
    if (sc.readOnlyRootFilesystem !== true) problem(w, "readOnlyRootFilesystem is not true");
    if (sc.allowPrivilegeEscalation !== false) problem(w, "allowPrivilegeEscalation is not false");
    if (sc.privileged === true) problem(w, "privileged");
    if (!(sc.capabilities?.drop ?? []).includes("ALL")) problem(w, "capabilities do not drop ALL");
    if (sc.capabilities?.add?.length) problem(w, `adds capabilities ${sc.capabilities.add}`);
    if ((sc.seccompProfile ?? podSc.seccompProfile)?.type !== "RuntimeDefault") problem(w, "seccompProfile is not RuntimeDefault");
    if (!c.readinessProbe) problem(w, "no readinessProbe");
    if (!c.livenessProbe) problem(w, "no livenessProbe");
    const portNames = new Set((c.ports ?? []).map((p) => p.name));
    for (const probe of ["readinessProbe", "livenessProbe", "startupProbe"]) {
      const port = c[probe]?.httpGet?.port;
      if (typeof port === "string" && !portNames.has(port)) problem(w, `${probe} names port ${port}, which the container does not declare`);
    }
    if (c.readinessProbe?.httpGet && c.readinessProbe.httpGet.path !== "/readyz") problem(w, "readinessProbe should ask /readyz");
    if (c.livenessProbe?.httpGet && c.livenessProbe.httpGet.path !== "/healthz") problem(w, "livenessProbe should ask /healthz");
    const r = c.resources ?? {};
    if (!r.requests?.cpu || !r.requests?.memory) problem(w, "resources.requests needs cpu and memory");
    if (!r.limits?.memory) problem(w, "resources.limits needs memory");
    for (const m of c.volumeMounts ?? []) if (!volumes.has(m.name)) problem(w, `volumeMount ${m.name} has no volume`);
    // With a read-only root, every place leadflow writes must be a volume.
    const mounted = new Set((c.volumeMounts ?? []).map((m) => m.mountPath));
    const env = environment(objs, ns, c, w);
    if (!mounted.has("/tmp")) problem(w, "/tmp is not a volume (read-only root filesystem)");
    const dataDir = env.LEADFLOW_DATA_DIR?.value;
    if (!dataDir || !mounted.has(dataDir)) problem(w, `LEADFLOW_DATA_DIR (${dataDir ?? "unset"}) is not a mounted volume`);
    for (const name of Object.keys(env))
      if (name.startsWith("LEADFLOW_") && !SETTINGS.has(name)) problem(w, `${name} is not a setting leadflow knows (it would stop at start)`);
    if (production && (!c.image || /:latest$/.test(c.image) || !/[:@]/.test(c.image.split("/").pop())))
      problem(w, `image ${c.image} is not pinned to a tag or digest`);
  }
  return volumes;
}

function storeTarget(env) {
  const url = env.LEADFLOW_STORE?.value;
  if (!url) return null;
  const m = /^postgres(?:ql)?:\/\/(?:[^@/]*@)?([^:/?]+)/.exec(url);
  // leadflow's listen_host=...: where the process's listening connections go instead.
  const listen = /[?&]listen_host=([^&]+)/.exec(url);
  return { host: m ? m[1] : null, listenHost: listen ? decodeURIComponent(listen[1]) : m ? m[1] : null, url };
}

function checkRender(name, objs, { production }) {
  const where0 = name;
  const seen = new Set();
  for (const o of objs) {
    const w = `${where0} ${id(o)} (${path.relative(root, o.__source ?? "?")})`;
    if (!o.metadata?.name) problem(w, "no metadata.name");
    if (seen.has(`${o.apiVersion}/${id(o)}`)) problem(w, "defined twice");
    seen.add(`${o.apiVersion}/${id(o)}`);
    validateSchema(o, w);
  }
  const at = (o) => `${where0} ${id(o)}`;

  const cm = byKind(objs, "ConfigMap").find((c) => c.metadata.name === "leadflow");
  const prefix = cm?.data?.LEADFLOW_TOPIC_PREFIX ?? "leadflow";
  const group = cm?.data?.LEADFLOW_WORKER_GROUP ?? "leadflow-workers";

  // Workloads.
  const deployments = byKind(objs, "Deployment");
  const byCommand = {};
  for (const d of deployments) {
    checkContainers(objs, d, at(d), production);
    const pdb = byKind(objs, "PodDisruptionBudget").find((p) => matches(p.spec?.selector?.matchLabels, d.spec.template.metadata?.labels));
    if (!pdb) problem(at(d), "no PodDisruptionBudget selects its pods");
    for (const c of d.spec.template.spec.containers) byCommand[(c.command ?? [])[0]] = { d, c };
  }
  for (const bin of ["leadflow-ingest", "leadflow-worker"]) if (!byCommand[bin]) problem(where0, `no Deployment runs ${bin}`);
  const ingest = byCommand["leadflow-ingest"];
  const worker = byCommand["leadflow-worker"];

  // Services select pods that exist and name ports those pods declare.
  for (const s of byKind(objs, "Service")) {
    const d = deployments.find((x) => matches(s.spec?.selector, x.spec.template.metadata?.labels));
    if (!d) { problem(at(s), "selects no Deployment's pods"); continue; }
    const ports = new Set(d.spec.template.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => p.name)));
    for (const p of s.spec.ports ?? []) if (typeof p.targetPort === "string" && !ports.has(p.targetPort)) problem(at(s), `targetPort ${p.targetPort} is not a port of ${d.metadata.name}`);
  }

  // Autoscaling: targets exist and set no replicas of their own.
  const scaled = new Map();
  for (const h of byKind(objs, "HorizontalPodAutoscaler")) scaled.set(h.spec.scaleTargetRef.name, at(h));
  for (const so of byKind(objs, "ScaledObject")) {
    const n = so.spec.scaleTargetRef.name;
    if (scaled.has(n)) problem(at(so), `Deployment ${n} is also scaled by ${scaled.get(n)}`);
    scaled.set(n, at(so));
  }
  for (const [n, by] of scaled) {
    const d = find(objs, "Deployment", n);
    if (!d) problem(by, `scales ${n}, which is not in the manifests`);
    else if (d.spec.replicas !== undefined) problem(at(d), `sets replicas while ${by} scales it (each apply would reset the count)`);
  }
  if (ingest && !byKind(objs, "HorizontalPodAutoscaler").some((h) => h.spec.scaleTargetRef.name === ingest.d.metadata.name)) problem(where0, "no HorizontalPodAutoscaler for the ingest");

  // Ingest: a front only, no embedded workers.
  if (ingest) {
    const env = environment(objs, ingest.d.metadata.namespace, ingest.c, at(ingest.d));
    if (env.LEADFLOW_WORKERS?.value !== "0") problem(at(ingest.d), "LEADFLOW_WORKERS must be 0 for leadflow-ingest");
  }

  // Kafka (Strimzi): KRaft with node pools, topics, users.
  const kafkas = byKind(objs, "Kafka");
  if (kafkas.length !== 1) problem(where0, `expected one Kafka, found ${kafkas.length}`);
  const kafka = kafkas[0];
  if (kafka) {
    if (kafka.spec.zookeeper) problem(at(kafka), "uses ZooKeeper; KRaft expected");
    if (kafka.spec.kafka.authorization?.type !== "simple") problem(at(kafka), "authorization must be simple (ACLs)");
    for (const l of kafka.spec.kafka.listeners ?? []) {
      if (!l.authentication) problem(at(kafka), `listener ${l.name} has no authentication`);
      if (!l.tls) problem(at(kafka), `listener ${l.name} is not TLS`);
    }
    if (String(kafka.spec.kafka.config?.["min.insync.replicas"]) !== "2") problem(at(kafka), "config min.insync.replicas must be 2");
    const pools = byKind(objs, "KafkaNodePool").filter((p) => p.metadata.labels?.["strimzi.io/cluster"] === kafka.metadata.name);
    const count = (role) => pools.filter((p) => p.spec.roles.includes(role)).reduce((n, p) => n + p.spec.replicas, 0);
    if (count("controller") < 3) problem(at(kafka), `KRaft controllers: ${count("controller")}, need 3`);
    if (count("broker") < 3) problem(at(kafka), `brokers: ${count("broker")}, need 3 (replicas 3)`);
  }
  const topics = new Map();
  for (const t of byKind(objs, "KafkaTopic")) {
    const topicName = t.spec.topicName ?? t.metadata.name;
    topics.set(topicName, t);
    if (kafka && t.metadata.labels?.["strimzi.io/cluster"] !== kafka.metadata.name) problem(at(t), "its strimzi.io/cluster label names no Kafka here");
    if (t.spec.replicas !== 3) problem(at(t), `replicas ${t.spec.replicas}, must be 3`);
    if (String(t.spec.config?.["min.insync.replicas"]) !== "2") problem(at(t), "min.insync.replicas must be 2");
    if (!t.spec.config?.["retention.ms"] && !t.spec.config?.["retention.bytes"]) problem(at(t), "no retention set");
    if (!(t.spec.partitions > 0)) problem(at(t), "no partitions");
  }
  for (const suffix of ["leads", "results", "leads.retry", "leads.dead"])
    if (!topics.has(`${prefix}.${suffix}`)) problem(where0, `no KafkaTopic for ${prefix}.${suffix} (LEADFLOW_TOPIC_PREFIX ${prefix})`);
  const acls = expectedAcls(prefix, group);
  for (const [user, want] of Object.entries(acls)) {
    const u = find(objs, "KafkaUser", user);
    if (!u) { problem(where0, `no KafkaUser ${user}`); continue; }
    if (!["tls", "scram-sha-512"].includes(u.spec.authentication?.type)) problem(at(u), "authentication must be tls or scram-sha-512");
    const have = {};
    for (const a of u.spec.authorization?.acls ?? []) {
      const k = `${a.resource.type}:${a.resource.name}:${a.resource.patternType ?? "literal"}`;
      have[k] = [...new Set([...(have[k] ?? []), ...(a.operations ?? [a.operation])])].sort();
    }
    for (const k of new Set([...Object.keys(want), ...Object.keys(have)])) {
      const w = (want[k] ?? []).slice().sort().join(",");
      const h = (have[k] ?? []).join(",");
      if (w !== h) problem(at(u), `ACL on ${k}: has [${h}], least privilege is [${w}]`);
    }
  }

  // KEDA: the workers scale on their group's lag on the leads topic, never past its partitions.
  const sos = byKind(objs, "ScaledObject");
  if (worker && !sos.some((s) => s.spec.scaleTargetRef.name === worker.d.metadata.name)) problem(where0, "no ScaledObject scales the workers");
  for (const so of sos) {
    for (const t of so.spec.triggers ?? []) {
      if (t.type !== "kafka") continue;
      const m = t.metadata ?? {};
      if (m.topic !== `${prefix}.leads`) problem(at(so), `trigger topic ${m.topic}, expected ${prefix}.leads`);
      if (m.consumerGroup !== group) problem(at(so), `trigger consumerGroup ${m.consumerGroup}, expected ${group} (LEADFLOW_WORKER_GROUP)`);
      const topic = topics.get(m.topic);
      const max = so.spec.maxReplicaCount ?? 100;
      if (topic && max > topic.spec.partitions) problem(at(so), `maxReplicaCount ${max} exceeds the ${topic.spec.partitions} partitions of ${m.topic}`);
      if (kafka) {
        const want = `${kafka.metadata.name}-kafka-bootstrap.${kafka.metadata.namespace}.svc`;
        if (!String(m.bootstrapServers).split(",").every((s) => s.startsWith(`${want}:`))) problem(at(so), `bootstrapServers ${m.bootstrapServers} is not ${want}:PORT`);
      }
      if (t.authenticationRef && !find(objs, "TriggerAuthentication", t.authenticationRef.name)) problem(at(so), `authenticationRef ${t.authenticationRef.name} is not in the manifests`);
    }
  }

  // PostgreSQL (CloudNativePG): 3 instances, backups, a transaction-mode pooler; only processes
  // without session state go through the pooler.
  const clusters = byKind(objs, "Cluster");
  if (clusters.length !== 1) problem(where0, `expected one CloudNativePG Cluster, found ${clusters.length}`);
  const db = clusters[0];
  if (db) {
    if (db.spec.instances !== 3) problem(at(db), `instances ${db.spec.instances}, must be 3`);
    if (!db.spec.backup?.barmanObjectStore && !(db.spec.plugins ?? []).some((p) => p.isWALArchiver)) problem(at(db), "no backup to object storage");
    if (!byKind(objs, "ScheduledBackup").some((b) => b.spec.cluster?.name === db.metadata.name)) problem(at(db), "no ScheduledBackup");
  }
  const poolers = byKind(objs, "Pooler");
  for (const p of poolers) {
    if (db && p.spec.cluster?.name !== db.metadata.name) problem(at(p), `cluster ${p.spec.cluster?.name} is not ${db.metadata.name}`);
  }
  const txPoolers = new Set(poolers.filter((p) => (p.spec.pgbouncer?.poolMode ?? "session") === "transaction").map((p) => p.metadata.name));
  if (!txPoolers.size) problem(where0, "no Pooler in transaction mode");
  for (const [bin, w] of Object.entries(byCommand)) {
    const env = environment(objs, w.d.metadata.namespace, w.c, at(w.d));
    const t = storeTarget(env);
    if (!t) { problem(at(w.d), "LEADFLOW_STORE is not a postgresql:// URL"); continue; }
    const valid = new Set([...(db ? [`${db.metadata.name}-rw`] : []), ...poolers.map((p) => p.metadata.name)]);
    if (!valid.has(t.host)) problem(at(w.d), `LEADFLOW_STORE host ${t.host} is neither ${db?.metadata.name}-rw nor a Pooler`);
    // The ingest LISTENs for outcomes: a session feature a transaction-mode pooler breaks.
    if (bin === "leadflow-ingest" && txPoolers.has(t.host)) problem(at(w.d), "leadflow-ingest LISTENs and cannot go through a transaction-mode pooler");
    if (bin === "leadflow-worker" && !txPoolers.has(t.host)) problem(at(w.d), "leadflow-worker should go through the transaction-mode pooler");
    // Every process LISTENs (the workers for changed postback endpoints): its listening
    // connections must reach the server itself, not a transaction-mode pooler.
    if (txPoolers.has(t.listenHost)) problem(at(w.d), `its listening connections go to ${t.listenHost}, a transaction-mode pooler, which holds no LISTEN (set listen_host=${db?.metadata.name}-rw)`);
    else if (!valid.has(t.listenHost)) problem(at(w.d), `listen_host ${t.listenHost} is neither ${db?.metadata.name}-rw nor a Pooler`);
    if (/password=|:[^@/]*@/.test(t.url.replace(/^postgres(ql)?:\/\//, ""))) problem(at(w.d), "LEADFLOW_STORE spells a password; take it from the app secret (PGPASSWORD)");
  }

  // Monitoring.
  const rules = byKind(objs, "PrometheusRule");
  if (!rules.some((r) => (r.spec.groups ?? []).some((g) => g.rules?.length))) problem(where0, "no PrometheusRule with rules");
  for (const sm of byKind(objs, "ServiceMonitor")) {
    const svcs = byKind(objs, "Service").filter((s) => matches(sm.spec.selector?.matchLabels, s.metadata.labels));
    if (!svcs.length) problem(at(sm), "selects no Service");
    for (const e of sm.spec.endpoints ?? [])
      if (!svcs.some((s) => s.spec.ports.some((p) => p.name === e.port))) problem(at(sm), `endpoint port ${e.port} is on none of its Services`);
  }
  for (const bin of ["leadflow-ingest", "leadflow-worker"]) {
    const w = byCommand[bin];
    if (w && !byKind(objs, "ServiceMonitor").some((sm) => byKind(objs, "Service").some((s) => matches(sm.spec.selector?.matchLabels, s.metadata.labels) && matches(s.spec.selector, w.d.spec.template.metadata.labels))))
      problem(where0, `no ServiceMonitor scrapes ${bin}`);
  }
  // The operators' pods, by the labels the operators give them (Strimzi: a Kafka's nodes;
  // CloudNativePG: a Cluster's instances, a Pooler's PgBouncer pods), and the job each monitor
  // gives its targets (the value of its jobLabel): every job="..." an alert rule names must be
  // one of them, or the rule watches nothing.
  const operatorPods = [
    ...kafkas.map((k) => ({ "strimzi.io/cluster": k.metadata.name, "strimzi.io/kind": "Kafka", "strimzi.io/name": `${k.metadata.name}-kafka` })),
    ...clusters.map((c) => ({ "cnpg.io/cluster": c.metadata.name, "cnpg.io/podRole": "instance" })),
    ...byKind(objs, "Pooler").map((p) => ({ "cnpg.io/poolerName": p.metadata.name, "cnpg.io/cluster": p.spec.cluster.name, "cnpg.io/podRole": "pooler" })),
  ];
  const jobs = new Set();
  for (const sm of byKind(objs, "ServiceMonitor"))
    for (const s of byKind(objs, "Service").filter((s) => matches(sm.spec.selector?.matchLabels, s.metadata.labels)))
      jobs.add(sm.spec.jobLabel ? s.metadata.labels?.[sm.spec.jobLabel] : s.metadata.name);
  for (const pm of byKind(objs, "PodMonitor")) {
    const pods = operatorPods.filter((l) => matches(pm.spec.selector?.matchLabels, l));
    if (!pods.length) problem(at(pm), "selects none of the pods Strimzi or CloudNativePG make here");
    for (const l of pods) {
      if (pm.spec.jobLabel && !l[pm.spec.jobLabel]) problem(at(pm), `its jobLabel ${pm.spec.jobLabel} is not a label of the pods it selects`);
      jobs.add(pm.spec.jobLabel ? l[pm.spec.jobLabel] : `${pm.metadata.namespace}/${pm.metadata.name}`);
    }
  }
  for (const r of rules)
    for (const rule of (r.spec.groups ?? []).flatMap((g) => g.rules ?? []))
      for (const m of String(rule.expr).matchAll(/\bjob="([^"]+)"/g))
        if (!jobs.has(m[1])) problem(at(r), `${rule.alert ?? rule.record} reads job "${m[1]}", which no ServiceMonitor or PodMonitor scrapes`);
  // The counts the rules expect are the manifests': brokers of the node pools, standbys of the
  // Cluster (its instances less the primary).
  const ruleExprs = rules.flatMap((r) => (r.spec.groups ?? []).flatMap((g) => g.rules ?? []).map((rule) => [r, rule, String(rule.expr)]));
  const brokers = kafka ? byKind(objs, "KafkaNodePool").filter((p) => p.metadata.labels?.["strimzi.io/cluster"] === kafka.metadata.name && p.spec.roles.includes("broker")).reduce((n, p) => n + p.spec.replicas, 0) : 0;
  const standbys = clusters[0] ? clusters[0].spec.instances - 1 : 0;
  for (const [r, rule, expr] of ruleExprs) {
    const b = /activebrokercount\{[^}]*\}\)\s*<\s*(\d+)/.exec(expr);
    if (b && Number(b[1]) !== brokers) problem(at(r), `${rule.alert} expects ${b[1]} brokers; the node pools have ${brokers}`);
    const st = /streaming_replicas\{[\s\S]*\)\s*<\s*(\d+)\s*$/.exec(expr.trim());
    if (st && Number(st[1]) > 1 && Number(st[1]) !== standbys) problem(at(r), `${rule.alert} expects ${st[1]} standbys; the Cluster has ${standbys}`);
  }
  // Kafka's metrics: the exporter's rules are a ConfigMap in the manifests.
  const mc = kafka?.spec.kafka.metricsConfig?.valueFrom?.configMapKeyRef;
  if (mc && !byKind(objs, "ConfigMap").some((c) => c.metadata.name === mc.name && c.metadata.namespace === kafka.metadata.namespace && c.data?.[mc.key]))
    problem(at(kafka), `metricsConfig names ConfigMap ${mc.name} key ${mc.key}, which is not in the manifests`);

  // Network policies.
  const policyFor = (w) => byKind(objs, "NetworkPolicy").filter((p) => matches(p.spec.podSelector?.matchLabels, w.d.spec.template.metadata.labels));
  for (const [bin, w] of Object.entries(byCommand)) {
    const pols = policyFor(w);
    if (!pols.length) { problem(at(w.d), "no NetworkPolicy selects its pods"); continue; }
    const egress = pols.flatMap((p) => ((p.spec.policyTypes ?? []).includes("Egress") ? p.spec.egress ?? [] : null) ?? []);
    if (!pols.some((p) => (p.spec.policyTypes ?? []).includes("Egress"))) problem(at(w.d), "egress is not restricted");
    for (const rule of egress) {
      if (!rule.to?.length) problem(at(w.d), "an egress rule allows every destination");
      for (const peer of rule.to ?? []) {
        const b = peer.ipBlock;
        if (!b || b.cidr.includes(":")) continue;
        for (const r of PRIVATE_V4)
          if (covers(b.cidr, r) && !(b.except ?? []).some((e) => covers(e, r))) problem(at(w.d), `egress to ${b.cidr} does not except ${r}`);
        if (covers(b.cidr, METADATA_ADDRESS) && !(b.except ?? []).some((e) => covers(e, METADATA_ADDRESS))) problem(at(w.d), `egress to ${b.cidr} reaches the metadata address 169.254.169.254`);
      }
    }
    const egressPorts = new Set(egress.flatMap((r) => (r.ports ?? []).map((p) => p.port)));
    for (const port of [53, 9093, 5432]) if (!egressPorts.has(port)) problem(at(w.d), `no egress rule for port ${port} (DNS, Kafka, PostgreSQL)`);
    // The pods behind the store's host and its listening connections' host, on 5432.
    const t = storeTarget(environment(objs, w.d.metadata.namespace, w.c, at(w.d)));
    for (const host of new Set([t?.host, t?.listenHost].filter(Boolean))) {
      const pooler = poolers.find((p) => p.metadata.name === host);
      const pods = pooler ? { "cnpg.io/poolerName": host, "cnpg.io/cluster": pooler.spec.cluster.name, "cnpg.io/podRole": "pooler" } : db && host === `${db.metadata.name}-rw` ? { "cnpg.io/cluster": db.metadata.name, "cnpg.io/podRole": "instance" } : null;
      if (pods && !egress.some((r) => (r.ports ?? []).some((p) => p.port === 5432) && (r.to ?? []).some((p) => p.podSelector && !p.namespaceSelector && matches(p.podSelector.matchLabels, pods))))
        problem(at(w.d), `no egress rule reaches ${host}'s pods on port 5432`);
    }
    const ingress = pols.flatMap((p) => p.spec.ingress ?? []);
    for (const rule of ingress) {
      const ports = (rule.ports ?? []).map((p) => p.port);
      if (ports.includes(9464) && !(rule.from ?? []).every((f) => f.namespaceSelector?.matchLabels?.["kubernetes.io/metadata.name"] === "monitoring" && !f.ipBlock))
        problem(at(w.d), "the metrics port is open to more than the monitoring namespace");
      if (!ports.length) problem(at(w.d), "an ingress rule opens every port");
      if (bin === "leadflow-worker" && ports.some((p) => p !== 9464)) problem(at(w.d), `workers accept connections on port ${ports}`);
    }
    // Workers reach buyers for auctions, ingest for the operator's test pings.
    if ((bin === "leadflow-worker" || bin === "leadflow-ingest") && !egress.some((r) => (r.to ?? []).some((p) => p.ipBlock?.cidr === "0.0.0.0/0")))
      problem(at(w.d), `${bin} cannot reach buyers on the internet (no egress to 0.0.0.0/0)`);
    if (bin === "leadflow-ingest" && !ingress.some((r) => !r.from && (r.ports ?? []).some((p) => p.port === 8443 || p.port === "https")))
      problem(at(w.d), "sellers cannot reach the ingest's HTTPS port from anywhere");
  }

  // Every Secret reference resolves to a Secret in the manifests or one an operator makes. The
  // base alone leaves the overlay's secrets unresolved by design; deployable renders must not.
  if (production) {
    const have = availableSecrets(objs);
    for (const o of objs)
      for (const r of secretRefs(o)) {
        const keys = have.get(`${r.ns}/${r.name}`);
        if (keys === undefined) problem(at(o), `${r.where}: Secret ${r.name} is neither in the manifests nor made by an operator`);
        else if (keys && r.key && !keys.has(r.key)) problem(at(o), `${r.where}: Secret ${r.name} has no key ${r.key}`);
      }
  }
}

// ------------------------------------------------------------------------------------------
// Every YAML file under k8s/ belongs to a kustomization (no stray manifest that nothing applies).
// ------------------------------------------------------------------------------------------
function checkLayout() {
  const used = new Set();
  const walkK = (dir) => {
    const kfile = path.join(dir, "kustomization.yaml");
    used.add(kfile);
    const [k] = loadYamlDocs(kfile);
    for (const r of k.resources ?? []) {
      const p = path.join(dir, r);
      if (fs.existsSync(p) && fs.statSync(p).isDirectory()) walkK(p);
      else used.add(p);
    }
    for (const p of k.patches ?? []) if (p.path) used.add(path.join(dir, p.path));
  };
  const overlays = fs.readdirSync(path.join(root, "k8s/overlays")).map((d) => path.join(root, "k8s/overlays", d));
  for (const o of overlays) walkK(o);
  walkK(path.join(root, "k8s/base"));
  const walk = (dir) =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
  for (const f of walk(path.join(root, "k8s")))
    if (/\.ya?ml$/.test(f) && !used.has(f)) problem(path.relative(root, f), "is under k8s/ but no kustomization uses it");
  return overlays;
}

// ------------------------------------------------------------------------------------------
// Dockerfile, checked statically (no Docker here).
// ------------------------------------------------------------------------------------------
function checkDockerfile(podUids) {
  const file = path.join(root, "Dockerfile");
  const w = "Dockerfile";
  if (!fs.existsSync(file)) return problem(w, "missing");
  const lines = fs.readFileSync(file, "utf8").replace(/\\\n/g, " ").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
  const args = {};
  const stages = [];
  for (const l of lines) {
    const [instr, ...rest] = l.split(/\s+/);
    const text = rest.join(" ");
    const I = instr.toUpperCase();
    if (I === "ARG" && !stages.length) {
      const [k, v] = text.split("=");
      args[k] = v;
    } else if (I === "FROM") {
      const m = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(text);
      const image = m[1].replace(/\$\{?(\w+)\}?/g, (_, a) => args[a] ?? "");
      stages.push({ image, name: m[2], lines: [] });
    } else if (stages.length) stages.at(-1).lines.push({ I, text });
  }
  if (stages.length < 2) problem(w, `${stages.length} stage(s); a builder and a runtime stage expected`);
  for (const s of stages) if (!/^debian:bookworm(-slim)?(@sha256:[0-9a-f]{64})?$/.test(s.image)) problem(w, `stage ${s.name ?? "?"} is FROM ${s.image}, not Debian bookworm`);
  for (const s of stages)
    for (const { I, text } of s.lines) {
      if (I === "ADD" && /(https?|ftp|git):\/\/|git@/.test(text)) problem(w, `ADD of a URL: ${text}`);
      if (I === "RUN" && /(curl|wget)[^|]*\|\s*(ba|z)?sh/.test(text)) problem(w, `pipes a download into a shell: ${text}`);
    }
  const [build, runtime] = [stages[0], stages.at(-1)];
  if (build && runtime && build !== runtime) {
    const runs = build.lines.filter((l) => l.I === "RUN").map((l) => l.text).join("\n");
    if (!/scripts\/deps\.sh/.test(runs)) problem(w, "the builder does not install dependencies with scripts/deps.sh");
    if (!/scripts\/build\.sh/.test(runs)) problem(w, "the builder does not build with scripts/build.sh");
    if (!/LEADFLOW_BUILD_TYPE=Release/.test(runs)) problem(w, "the build is not Release");
    if (!/LEADFLOW_BUILD_TESTS=OFF/.test(runs)) problem(w, "the build includes the tests");
    const rruns = runtime.lines.filter((l) => l.I === "RUN").map((l) => l.text).join("\n");
    if (/build-essential|cmake|-dev\b|\bg\+\+|clang/.test(rruns)) problem(w, "the runtime stage installs build tools or -dev packages");
    if (!runtime.lines.some((l) => l.I === "COPY" && /--from=/.test(l.text))) problem(w, "the runtime stage copies nothing from the builder");
    const users = runtime.lines.filter((l) => l.I === "USER");
    const user = users.at(-1)?.text;
    const uid = user && /^(\d+)(:\d+)?$/.exec(user)?.[1];
    if (!uid) problem(w, `the runtime stage's USER (${user ?? "none"}) must be a numeric uid`);
    else if (uid === "0") problem(w, "the runtime stage runs as root");
    else for (const [where, u] of podUids) if (String(u) !== uid) problem(where, `runAsUser ${u} differs from the image's uid ${uid}`);
  }
  for (const bin of ["leadflow-ingest", "leadflow-worker", "leadflow-admin"])
    if (!fs.readFileSync(file, "utf8").includes(bin)) problem(w, `${bin} is not in the image`);
  const ignore = fs.existsSync(path.join(root, ".dockerignore")) ? fs.readFileSync(path.join(root, ".dockerignore"), "utf8").split("\n").map((l) => l.trim()) : [];
  for (const p of [".git", "build", "build-*", "leadflow-data"]) if (!ignore.includes(p)) problem(".dockerignore", `does not exclude ${p}`);
}

// ------------------------------------------------------------------------------------------
let renders = 0;
try {
  const overlays = checkLayout();
  const targets = [{ dir: path.join(root, "k8s/base"), production: false }, ...overlays.map((dir) => ({ dir, production: true }))];
  const podUids = [];
  for (const t of targets) {
    const name = path.relative(root, t.dir);
    let r;
    try {
      r = render(t.dir);
    } catch (e) {
      if (!(e instanceof RenderError)) throw e;
      problem(name, e.message);
      continue;
    }
    renders++;
    for (const n of r.notes) console.log(`note: ${name}: ${n}`);
    checkRender(name, r.objects, t);
    for (const d of byKind(r.objects, "Deployment")) podUids.push([`${name} ${id(d)}`, d.spec.template.spec.securityContext?.runAsUser]);
    const kinds = {};
    for (const o of r.objects) kinds[o.kind] = (kinds[o.kind] ?? 0) + 1;
    console.log(`${name}: ${r.objects.length} objects (${Object.entries(kinds).map(([k, n]) => `${n} ${k}`).join(", ")})`);
  }
  checkDockerfile(podUids.filter(([, u]) => u !== undefined));
} catch (e) {
  problems.push(`validator: ${e.stack ?? e}`);
}

if (problems.length) {
  console.error(`\n${problems.length} problem(s):`);
  for (const p of problems) console.error(`  - ${p}`);
  process.exit(1);
}
console.log(`k8s manifests: ${renders} renders valid; Dockerfile checked`);
