// Small DOM and formatting helpers shared by the dashboard's modules.

export const $ = (selector) => document.querySelector(selector);

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

export const hex = (n) => `0x${Number(n).toString(16)}`;

export function size(bytes) {
  const units = [['TiB', 2 ** 40], ['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]];
  for (const [unit, scale] of units) {
    if (bytes >= scale) return `${(bytes / scale).toPrecision(3).replace(/\.?0+$/, '')} ${unit}`;
  }
  return `${bytes} B`;
}

export function bar(fraction, small = false) {
  const fill = el('div', { class: fraction > 0.85 ? 'fill high' : 'fill' });
  fill.style.width = `${Math.min(100, Math.max(0, fraction * 100)).toFixed(1)}%`;
  return el('div', { class: small ? 'bar small' : 'bar' }, fill);
}
