/**
 * A chart.js chart on a canvas, registered with only the parts used (bundle size). chart.js
 * sizes the canvas through element.style (the CSSOM), which the CSP's `style-src 'self'`
 * allows. The canvas is an image with a label; the figures are also in a table beside it.
 */
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';
import { axisLabel } from '../pages/dashboard-format';

Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  Legend,
);

const COLORS = ['#1f4e79', '#b3541e', '#2e7d32', '#6a1b9a', '#00695c', '#8d6e00'];

export interface Series {
  label: string;
  values: (number | null)[];
}

export function ChartView({
  kind,
  labels,
  series,
  title,
}: {
  kind: 'bar' | 'line';
  labels: string[];
  series: Series[];
  title: string;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const config: ChartConfiguration<'bar' | 'line', (number | null)[], string> = {
      type: kind,
      data: {
        labels,
        datasets: series.map((entry, index) => ({
          label: entry.label,
          data: entry.values,
          backgroundColor: COLORS[index % COLORS.length],
          borderColor: COLORS[index % COLORS.length],
        })),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: { legend: { position: 'bottom' } },
        // Costs are tiny numbers: plain decimals on the axis, not chart.js's 1.2E-5.
        scales: { y: { ticks: { callback: (value) => axisLabel(Number(value)) } } },
      },
    };
    const chart = new Chart(canvas.current, config);
    return () => chart.destroy();
  }, [kind, JSON.stringify(labels), JSON.stringify(series)]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div class="chart-box">
        <canvas
          ref={canvas}
          role="img"
          aria-label={`${title} (chart; the table below holds the same figures)`}
        />
      </div>
    </figure>
  );
}
