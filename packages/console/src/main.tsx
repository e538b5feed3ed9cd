// Stylesheets first: the generative UI's classes (imported by its renderer) come after them.
import './styles.css';
import './pages.css';
import { render } from 'preact';
import { App } from './app';

render(<App />, document.getElementById('app')!);
