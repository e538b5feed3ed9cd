/**
 * Draws a generative UI reply with real elements, one per registry component; text goes in as
 * text (Preact escapes it), never as markup. Styles become classes of the console's stylesheet
 * (`gu-color-primary`), so a reply can only pick theme values. Anything the check refuses falls
 * back to the standard renderer, with a notice saying so.
 */
import type { JSX } from 'preact';
import { JsonView } from '../components/ui';
import { approximate } from '../api/exact-json';
import { checkGenUi, type GenUiComponent } from './check';
import './gen-ui.css';

type Cell = string | number | boolean | null;
/** Every prop a registry component has; checkGenUi made sure each is of its declared kind. */
interface Props {
  text?: string;
  level?: number;
  format?: string;
  severity?: string;
  message?: string;
  title?: string;
  items?: unknown[];
  columns?: string[];
  rows?: Cell[][];
  caption?: string;
  ordered?: boolean;
  content?: string;
  language?: string;
  tone?: string;
  label?: string;
  value?: string | number;
  unit?: string;
  trend?: 'up' | 'down' | 'flat';
  url?: string;
}
const cellText = (value: Cell) => (value === null ? '' : String(value));

function classes(component: GenUiComponent): string {
  const names = Object.entries(component.style).map(
    ([name, value]) => `gu-${name.replace('_', '-')}-${value}`,
  );
  return ['gu', `gu-${component.type.replace('_', '-')}`, ...names].join(' ');
}

const TREND = { up: '▲ up', down: '▼ down', flat: '▶ flat' } as const;

function draw(component: GenUiComponent, key: number): JSX.Element {
  const p = component.props as Props;
  const cls = classes(component);
  switch (component.type) {
    case 'heading': {
      // The page has h1 and the stage h2/h3: a reply's level 1 is an h4.
      const Tag = (['h4', 'h5', 'h6', 'h6'] as const)[(p.level ?? 1) - 1] ?? 'h4';
      return (
        <Tag key={key} class={cls}>
          {p.text}
        </Tag>
      );
    }
    case 'text':
      return (
        <p key={key} class={cls}>
          {p.text}
        </p>
      );
    case 'alert':
      return (
        <div key={key} class={`${cls} gu-alert-${p.severity}`} role="note">
          {p.title && <strong>{p.title} </strong>}
          <span>{p.message}</span>
        </div>
      );
    case 'key_value':
      return (
        <dl key={key} class={cls}>
          {(p.items as { label: string; value: Cell }[]).map((item, index) => (
            <div key={index}>
              <dt>{item.label}</dt>
              <dd>{cellText(item.value)}</dd>
            </div>
          ))}
        </dl>
      );
    case 'table':
      return (
        <div key={key} class="table-scroll">
          <table class={cls}>
            {p.caption && <caption>{p.caption}</caption>}
            <thead>
              <tr>
                {p.columns!.map((column, index) => (
                  <th key={index} scope="col">
                    {column}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {p.rows!.map((row, index) => (
                <tr key={index}>
                  {row.map((cell, column) => (
                    <td key={column}>{cellText(cell)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
    case 'list': {
      const items = (p.items as string[]).map((item, index) => <li key={index}>{item}</li>);
      return p.ordered ? (
        <ol key={key} class={cls}>
          {items}
        </ol>
      ) : (
        <ul key={key} class={cls}>
          {items}
        </ul>
      );
    }
    case 'code':
      return (
        <pre key={key} class={cls} tabIndex={0} aria-label={p.language ? `${p.language} code` : 'code'}>
          <code>{p.content}</code>
        </pre>
      );
    case 'badge':
      return (
        <span key={key} class={`${cls} gu-tone-${p.tone ?? 'neutral'}`}>
          {p.text}
        </span>
      );
    case 'metric':
      return (
        <div key={key} class={cls}>
          <span class="gu-metric-label">{p.label}</span>
          <span class="gu-metric-value">
            {String(p.value)}
            {p.unit && ` ${p.unit}`}
          </span>
          {p.trend && <span class="gu-metric-trend">{TREND[p.trend]}</span>}
        </div>
      );
    case 'progress':
      return (
        <div key={key} class={cls}>
          <label>
            {p.label ?? 'Progress'} ({String(p.value)}%)
            <progress max={100} value={p.value} />
          </label>
        </div>
      );
    case 'link':
      return (
        <a key={key} class={cls} href={p.url} rel="noopener noreferrer nofollow" target="_blank">
          {p.text}
        </a>
      );
    case 'divider':
      return <hr key={key} class={cls} />;
    default:
      // checkGenUi lets only registry types through.
      return <JsonView key={key} value={component} label="Component" />;
  }
}

/** A stage's gen_ui: components when the reply is one the registry supports, else the data. */
export function GenUi({ value, valid, label }: { value: unknown; valid: boolean | null; label: string }) {
  // Components compute with the numbers; the fallback shows the data as written.
  const verdict = checkGenUi(approximate(value), valid);
  if (verdict.ok)
    return (
      <div class="gen-ui" data-gen-ui="components" aria-label={label} role="group">
        {verdict.components.map(draw)}
      </div>
    );
  return (
    <div class="gen-ui-fallback" data-gen-ui="fallback">
      <p class="notice notice-warning" role="note">
        Shown as data: the UI reply was {verdict.reason === 'invalid' ? 'invalid' : 'unsupported'} (
        {verdict.problems.slice(0, 3).join('; ')}
        {verdict.problems.length > 3 ? '; …' : ''}).
      </p>
      <JsonView value={value} label={`${label} as data`} />
    </div>
  );
}
