/**
 * /docs: a readable HTML page rendered from the OpenAPI document by this module alone (no CDN, no
 * Swagger UI bundle). Pure: document in, HTML out.
 */

type Json = Record<string, unknown>;

const esc = (s: unknown) =>
  String(s ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

const paragraphs = (text: unknown) =>
  String(text ?? '')
    .split(/\n\n+/)
    .filter((p) => p.trim() !== '')
    .map((p) => `<p>${esc(p)}</p>`)
    .join('\n');

const refName = (ref: string) => ref.replace('#/components/schemas/', '');
const anchor = (kind: string, name: string) => `${kind}-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;

/** A JSON Schema as a short type expression with links to named schemas. */
export function typeOf(s: Json | undefined): string {
  if (!s) return 'any';
  if (typeof s.$ref === 'string') {
    const n = refName(s.$ref);
    return `<a href="#${anchor('schema', n)}">${esc(n)}</a>`;
  }
  if (Array.isArray(s.anyOf)) return (s.anyOf as Json[]).map(typeOf).join(' | ');
  if (Array.isArray(s.oneOf)) return (s.oneOf as Json[]).map(typeOf).join(' | ');
  if (s.const !== undefined) return esc(JSON.stringify(s.const));
  if (Array.isArray(s.enum)) return (s.enum as unknown[]).map((v) => esc(JSON.stringify(v))).join(' | ');
  if (s.type === 'array') return `array of ${typeOf(s.items as Json | undefined)}`;
  if (s.type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object' && !s.properties) {
    return `object of ${typeOf(s.additionalProperties as Json)}`;
  }
  if (typeof s.type === 'string') return esc(s.format ? `${s.type} (${s.format})` : s.type);
  if (Array.isArray(s.type)) return esc((s.type as string[]).join(' | '));
  return 'any';
}

function constraints(s: Json | undefined): string {
  if (!s) return '';
  const out: string[] = [];
  if (s.minimum !== undefined) out.push(`≥ ${s.minimum}`);
  if (s.exclusiveMinimum !== undefined) out.push(`> ${s.exclusiveMinimum}`);
  if (s.maximum !== undefined) out.push(`≤ ${s.maximum}`);
  if (s.exclusiveMaximum !== undefined) out.push(`< ${s.exclusiveMaximum}`);
  if (s.minLength !== undefined) out.push(`at least ${s.minLength} characters`);
  if (s.maxLength !== undefined) out.push(`at most ${s.maxLength} characters`);
  if (s.pattern !== undefined) out.push(`pattern ${s.pattern}`);
  if (s.default !== undefined) out.push(`default ${JSON.stringify(s.default)}`);
  if (Array.isArray(s.examples) && s.examples.length > 0) out.push(`e.g. ${(s.examples as unknown[]).map((e) => JSON.stringify(e)).join(', ')}`);
  return esc(out.join('; '));
}

function parametersTable(params: Json[]): string {
  if (params.length === 0) return '<p class="muted">No parameters.</p>';
  const rows = params
    .map((p) => {
      const s = p.schema as Json | undefined;
      return `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${typeOf(s)}</td><td>${
        p.required ? 'yes' : 'no'
      }</td><td>${constraints(s)}</td><td>${esc(p.description)}</td></tr>`;
    })
    .join('\n');
  return `<table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Required</th><th>Bounds, default</th><th>Description</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function responsesList(responses: Json): string {
  const items = Object.entries(responses)
    .map(([status, r]) => {
      const resp = r as Json;
      const content = (resp.content ?? {}) as Record<string, Json>;
      const bodies = Object.entries(content)
        .map(([type, c]) => `<code>${esc(type)}</code> ${typeOf(c.schema as Json | undefined)}`)
        .join(', ');
      return `<li><span class="status s${esc(status[0])}">${esc(status)}</span> ${esc(resp.description)}${bodies ? ` — ${bodies}` : ''}</li>`;
    })
    .join('\n');
  return `<ul class="responses">${items}</ul>`;
}

function example(method: string, path: string, params: Json[]): string {
  const filled = path.replace(/\{([^}]+)\}/g, (_, n: string) => {
    const p = params.find((x) => x.name === n);
    const ex = ((p?.schema as Json | undefined)?.examples as unknown[] | undefined)?.[0];
    return ex !== undefined ? String(ex) : `{${n}}`;
  });
  const required = params.filter((p) => p.in === 'query' && p.required).map((p) => `${p.name}=…`);
  const qs = required.length > 0 ? `?${required.join('&')}` : '';
  return `<pre><code>curl ${method === 'POST' ? '-X POST ' : ''}"$BASE_URL${esc(filled)}${esc(qs)}"</code></pre>`;
}

function schemaSection(name: string, s: Json): string {
  const props = (s.properties ?? {}) as Record<string, Json>;
  const required = new Set((s.required as string[] | undefined) ?? []);
  const rows = Object.entries(props)
    .map(
      ([p, ps]) =>
        `<tr><td><code>${esc(p)}</code></td><td>${typeOf(ps)}</td><td>${required.has(p) ? 'yes' : 'no'}</td><td>${esc(
          ps.description,
        )} ${constraints(ps)}</td></tr>`,
    )
    .join('\n');
  const body = rows
    ? `<table><thead><tr><th>Field</th><th>Type</th><th>Always present</th><th>Description</th></tr></thead><tbody>${rows}</tbody></table>`
    : `<p>${typeOf(s)}</p>`;
  const open = s.additionalProperties !== undefined && s.additionalProperties !== false && Object.keys(props).length > 0;
  return `<section class="schema" id="${anchor('schema', name)}"><h3>${esc(name)}</h3>${s.description ? `<p>${esc(s.description)}</p>` : ''}${body}${
    open ? '<p class="muted">Fields the game adds later pass through unchanged.</p>' : ''
  }</section>`;
}

const STYLE = `
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7fb}
header{background:#20263a;color:#fff;padding:24px 32px}header h1{margin:0 0 4px}header a{color:#ffd34d}
main{max-width:1100px;margin:0 auto;padding:16px 32px 64px}nav ul{columns:2;padding-left:18px}
.op{background:#fff;border:1px solid #dde1ea;border-radius:8px;padding:12px 20px;margin:14px 0}
.op h3{margin:4px 0;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:16px}
.method{display:inline-block;min-width:52px;text-align:center;border-radius:4px;color:#fff;font-size:13px;padding:2px 6px;margin-right:8px}
.GET{background:#2f7de1}.POST{background:#26a269}.premium{background:#b5530b;color:#fff;border-radius:4px;padding:1px 6px;font-size:12px;margin-left:8px}
table{border-collapse:collapse;width:100%;margin:8px 0;font-size:14px}th,td{border-bottom:1px solid #e6e8ef;text-align:left;padding:4px 8px;vertical-align:top}
th{background:#f0f2f7}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
pre{background:#20263a;color:#e8ecf5;padding:8px 12px;border-radius:6px;overflow:auto}.muted{color:#6b7385}
.status{display:inline-block;min-width:36px;font-weight:600}.s2,.s3{color:#26a269}.s4{color:#b5530b}.s5{color:#c01c28}
.schema{background:#fff;border:1px solid #dde1ea;border-radius:8px;padding:8px 20px;margin:10px 0}footer{color:#6b7385;font-size:13px;margin-top:32px}
`;

/** The whole page. */
export function renderDocs(doc: Json): string {
  const info = doc.info as Json;
  const tags = (doc.tags ?? []) as { name: string; description?: string }[];
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;

  const ops: { tag: string; method: string; path: string; op: Json }[] = [];
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      ops.push({ tag: ((op.tags as string[] | undefined) ?? ['Other'])[0]!, method: method.toUpperCase(), path, op });
    }
  }

  const sections = tags
    .map((t) => {
      const mine = ops.filter((o) => o.tag === t.name);
      if (mine.length === 0) return '';
      const blocks = mine
        .map(({ method, path, op }) => {
          const params = (op.parameters ?? []) as Json[];
          const premium = Array.isArray(op.security) && op.security.length === 1;
          return `<div class="op" id="${anchor('op', String(op.operationId))}">
<h3><span class="method ${method}">${method}</span>${esc(path)}${premium ? '<span class="premium">premium</span>' : ''}</h3>
<p><strong>${esc(op.summary)}</strong></p>${paragraphs(op.description)}
<h4>Parameters</h4>${parametersTable(params)}
<h4>Responses</h4>${responsesList(op.responses as Json)}
${example(method, path, params)}</div>`;
        })
        .join('\n');
      return `<section id="${anchor('tag', t.name)}"><h2>${esc(t.name)}</h2><p class="muted">${esc(t.description)}</p>${blocks}</section>`;
    })
    .join('\n');

  const toc = tags
    .filter((t) => ops.some((o) => o.tag === t.name))
    .map(
      (t) =>
        `<li><a href="#${anchor('tag', t.name)}">${esc(t.name)}</a><ul>${ops
          .filter((o) => o.tag === t.name)
          .map((o) => `<li><a href="#${anchor('op', String(o.op.operationId))}"><code>${o.method} ${esc(o.path)}</code></a></li>`)
          .join('')}</ul></li>`,
    )
    .join('\n');

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(info.title)} API ${esc(info.version)}</title><style>${STYLE}</style></head>
<body><header><h1>${esc(info.title)} API</h1><div>Version ${esc(info.version)} · OpenAPI ${esc(doc.openapi)} · <a href="/openapi.json">openapi.json</a></div></header>
<main>${paragraphs(info.description)}
<nav><h2>Endpoints</h2><ul>${toc}</ul></nav>
${sections}
<section><h2>Schemas</h2>${Object.entries(schemas)
    .map(([n, s]) => schemaSection(n, s))
    .join('\n')}</section>
<footer>Generated from the OpenAPI document served at /openapi.json.</footer>
</main></body></html>
`;
}
