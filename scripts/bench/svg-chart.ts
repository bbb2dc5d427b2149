/** A small line chart as SVG text: one polyline per series over shared x values. */
export interface Series {
  name: string;
  colour: string;
  points: Array<[number, number]>;
}

export function lineChart(title: string, xLabel: string, yLabel: string, series: Series[]): string {
  const width = 640;
  const height = 360;
  const margin = { left: 70, right: 170, top: 40, bottom: 50 };
  const xs = [...new Set(series.flatMap((s) => s.points.map(([x]) => x)))].sort((a, b) => a - b);
  const yMax = Math.max(1, ...series.flatMap((s) => s.points.map(([, y]) => y))) * 1.1;
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  // Consumers are few and uneven (1, 2, 4, 10, 16): spread them evenly by rank, not by value.
  const px = (x: number) => margin.left + (xs.length === 1 ? plotW / 2 : (xs.indexOf(x) / (xs.length - 1)) * plotW);
  const py = (y: number) => margin.top + plotH - (y / yMax) * plotH;
  const ticks = Array.from({ length: 5 }, (_, i) => (yMax / 5) * (i + 1));
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2 - margin.right / 2}" y="22" text-anchor="middle" font-size="14">${title}</text>`,
    `<line x1="${margin.left}" y1="${margin.top + plotH}" x2="${margin.left + plotW}" y2="${margin.top + plotH}" stroke="black"/>`,
    `<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${margin.top + plotH}" stroke="black"/>`,
    ...ticks.map(
      (t) =>
        `<line x1="${margin.left}" y1="${py(t)}" x2="${margin.left + plotW}" y2="${py(t)}" stroke="#ddd"/>` +
        `<text x="${margin.left - 6}" y="${py(t) + 4}" text-anchor="end">${Math.round(t).toLocaleString('en-US')}</text>`,
    ),
    ...xs.map((x) => `<text x="${px(x)}" y="${margin.top + plotH + 18}" text-anchor="middle">${x}</text>`),
    `<text x="${margin.left + plotW / 2}" y="${height - 10}" text-anchor="middle">${xLabel}</text>`,
    `<text x="16" y="${margin.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${margin.top + plotH / 2})">${yLabel}</text>`,
  ];
  series.forEach((s, i) => {
    const points = s.points.map(([x, y]) => `${px(x)},${py(y)}`).join(' ');
    parts.push(`<polyline fill="none" stroke="${s.colour}" stroke-width="2" points="${points}"/>`);
    for (const [x, y] of s.points) parts.push(`<circle cx="${px(x)}" cy="${py(y)}" r="3" fill="${s.colour}"/>`);
    const ly = margin.top + 10 + i * 20;
    parts.push(`<line x1="${width - margin.right + 15}" y1="${ly}" x2="${width - margin.right + 35}" y2="${ly}" stroke="${s.colour}" stroke-width="2"/>`);
    parts.push(`<text x="${width - margin.right + 40}" y="${ly + 4}">${s.name}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
