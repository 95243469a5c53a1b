// The API page: the OpenAPI document's operations and webhooks, readable (no build step).
(async function () {
  const doc = await (await fetch('/api/openapi.json')).json();
  const root = document.getElementById('operations');
  root.textContent = '';
  document.getElementById('overview').textContent = doc.info.description || '';
  // '#/components/<kind>/<name>' -> that component (schemas, parameters, headers).
  const resolve = (s) => s && s.$ref ? s.$ref.slice(2).split('/').reduce((node, key) => node[key], doc) : s;
  const sections = [[root, doc.paths], [document.getElementById('webhooks'), doc['x-webhooks'] || {}]];
  for (const [target, paths] of sections) for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (method === 'parameters') continue;  // the path's own (its path parameters), shown with each operation
      const box = document.createElement('details');
      const head = document.createElement('summary');
      head.textContent = method.toUpperCase() + ' ' + path + ' — ' + (op.summary || '');
      box.appendChild(head);
      if (op.description) {
        const text = document.createElement('p');
        text.className = 'prewrap';
        text.textContent = op.description;
        box.appendChild(text);
      }
      const pre = document.createElement('pre');
      const body = op.requestBody ? Object.values(op.requestBody.content)[0].schema : null;
      pre.textContent = JSON.stringify({
        security: op.security, parameters: [...(ops.parameters || []), ...(op.parameters || [])].map(resolve),
        requestBody: resolve(body),
        responses: Object.keys(op.responses)
      }, null, 2);
      box.appendChild(pre);
      target.appendChild(box);
    }
  }
})();
