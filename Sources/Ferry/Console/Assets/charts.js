// Small live line charts on a canvas: the last 60 samples of one or more series.
import { h, show } from './dom.js';

const COLORS = ['#1b6a96', '#b3261e', '#2e7d32', '#8a5a00'];

export class Chart {
  constructor(id, title, series, unit) {
    this.series = series;
    this.unit = unit;
    this.samples = [];
    this.canvas = h('canvas', { width: 600, height: 220 });
    this.latest = h('span', { class: 'latest' }, '…');
    this.element = h('figure', { class: 'chart', id, dataset: { samples: '0' } },
      h('figcaption', null, h('strong', null, title),
        h('span', { class: 'legend' }, series.map((name, index) => h('span', null, h('i', { class: `c${index}` }), name))),
        this.latest),
      this.canvas);
    for (const [index, item] of [...this.element.querySelectorAll('.legend i')].entries()) item.style.background = COLORS[index];
  }

  /** Adds one sample: a number (or null: no value yet) per series. */
  push(values) {
    this.samples.push(values);
    if (this.samples.length > 60) this.samples.shift();
    this.element.dataset.samples = String(this.samples.length);
    this.element.dataset.latest = JSON.stringify(values);
    show(this.latest, values.map((value, index) => `${this.series[index]} ${format(value)}${this.unit}`).join(' · '));
    this.draw();
  }

  draw() {
    const { canvas } = this;
    const context = canvas.getContext('2d');
    const width = canvas.width, height = canvas.height, pad = 6;
    context.clearRect(0, 0, width, height);
    const all = this.samples.flat().filter((value) => typeof value === 'number' && Number.isFinite(value));
    const max = Math.max(1e-9, ...all) * 1.15;
    context.strokeStyle = '#d7dee3';
    context.lineWidth = 1;
    for (const fraction of [0.25, 0.5, 0.75]) {
      context.beginPath();
      context.moveTo(0, pad + (height - 2 * pad) * fraction);
      context.lineTo(width, pad + (height - 2 * pad) * fraction);
      context.stroke();
    }
    context.fillStyle = '#5d6d78';
    context.font = '20px system-ui, sans-serif';
    context.fillText(format(max / 1.15) + this.unit, 8, 24);
    this.series.forEach((_, index) => {
      context.strokeStyle = COLORS[index];
      context.lineWidth = 3;
      context.beginPath();
      let started = false;
      this.samples.forEach((sample, at) => {
        const value = sample[index];
        if (typeof value !== 'number' || !Number.isFinite(value)) { started = false; return; }
        const x = (at / 59) * width;
        const y = height - pad - (value / max) * (height - 2 * pad);
        if (started) context.lineTo(x, y); else context.moveTo(x, y);
        started = true;
      });
      context.stroke();
    });
  }
}

export function format(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  if (Math.abs(value) >= 100) return String(Math.round(value));
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2).replace(/\.?0+$/, '') || '0';
}
